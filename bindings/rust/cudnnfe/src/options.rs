//! Typed options of each operation and of the build.
//!
//! Every options type mirrors a C options struct. Its [`Default`] is read
//! from the C init function (`cudnnfe_*_options_init_sized`), so the defaults are
//! the library's. Fields are public; the types are `#[non_exhaustive]` so
//! that fields can be added as the C structs grow: start from
//! `Default::default()` and use the builder methods or assign fields.

use std::ffi::{c_char, CString};
use std::mem::MaybeUninit;
use std::path::PathBuf;
use std::sync::Arc;

use cudnnfe_sys as sys;

use crate::device_properties::DeviceProperties;
use crate::error::{Error, Result};
use crate::kernel_cache::KernelCache;
use crate::plans::{BehaviorNotes, NumericalNotes};
use crate::types::{
    AttentionImplementation, BuildPolicy, ConvMode, DataType, DiagonalAlignment, HeurMode,
    MoeGroupedMatmulMode, NormPhase, PaddingMode, ResampleMode, RngDistribution, Target, Tensor,
    VerifyMode,
};

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

/// Calls a C options init function (`cudnnfe_*_init_sized`) on fresh
/// memory, with the size of the struct this crate was generated with: the
/// library writes exactly those bytes, so an older library never writes past
/// them and a newer one fills every field this crate knows.
fn init<T>(f: unsafe extern "C" fn(*mut T, usize)) -> T {
    let mut raw = MaybeUninit::<T>::zeroed();
    // SAFETY: the init functions write the first `size_of::<T>()` bytes (the
    // whole struct); zeroed memory is a valid value of these plain-data
    // structs anyway.
    unsafe {
        f(raw.as_mut_ptr(), std::mem::size_of::<T>());
        raw.assume_init()
    }
}

/// Copies up to three spatial values over `target`; a const-generic array so
/// that more than three (CUDNNFE_MAX_SPATIAL_DIMS) does not compile.
fn spatial<const N: usize>(target: &mut [i64; 3], values: [i64; N]) {
    const {
        assert!(
            N <= 3,
            "convolutions and resampling have at most 3 spatial dimensions"
        )
    };
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
}

/// Builder methods of the attention options that forward and backward share
/// (`docs/attention.md` defines each exactly).
macro_rules! attention_builders {
    () => {
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
        /// Takes the softmax scale from a FLOAT tensor of one element (a
        /// graph input, read at every execute, or a scalar); `attn_scale`
        /// must then stay 0.
        pub fn attn_scale_tensor(mut self, scale: Tensor) -> Self {
            self.attn_scale_tensor = Some(scale);
            self
        }
        /// Sets the top-left causal mask (row `i` sees columns `<= i`).
        pub fn causal_mask(mut self, causal: bool) -> Self {
            self.causal_mask = causal;
            self
        }
        /// Sets the bottom-right causal mask (row `i` sees columns `<= i +
        /// s_kv - s_q`).
        pub fn causal_mask_bottom_right(mut self, causal: bool) -> Self {
            self.causal_mask_bottom_right = causal;
            self
        }
        /// Sets the additive bias tensor, broadcastable to `[b, h_q, s_q, s_kv]`.
        pub fn bias(mut self, bias: Tensor) -> Self {
            self.bias = Some(bias);
            self
        }
        /// Variable sequence lengths: `seq_len_q` and `seq_len_kv` are INT32
        /// graph inputs of dims `[b, 1, 1, 1]`; row `i` of batch `n` sees
        /// column `j` only if `i < seq_len_q[n]` and `j < seq_len_kv[n]`.
        /// Sets `padding_mask` and both tensors.
        pub fn padding(mut self, seq_len_q: Tensor, seq_len_kv: Tensor) -> Self {
            self.padding_mask = true;
            self.seq_len_q = Some(seq_len_q);
            self.seq_len_kv = Some(seq_len_kv);
            self
        }
        /// Left bound of the diagonal band (sliding window): row `i` sees
        /// column `j` only if `j > d(i) - left` (`left >= 1`).
        pub fn window_left(mut self, left: i64) -> Self {
            self.window_left = Some(left);
            self
        }
        /// Right bound of the diagonal band: row `i` sees column `j` only if
        /// `j <= d(i) + right` (`right >= 0`).
        pub fn window_right(mut self, right: i64) -> Self {
            self.window_right = Some(right);
            self
        }
        /// Where the band's diagonal `d(i)` starts (default top-left).
        pub fn diagonal_alignment(mut self, alignment: DiagonalAlignment) -> Self {
            self.diagonal_alignment = alignment;
            self
        }
        /// ALiBi: adds `slope(h) * (j - i)` to the scores (needs a top-left
        /// causal mask, as cuDNN does).
        pub fn alibi_mask(mut self, alibi: bool) -> Self {
            self.alibi_mask = alibi;
            self
        }
        /// Drawn dropout of P: each element dropped with `probability` (0 to
        /// 1, exclusive), kept ones scaled by `1 / (1 - probability)`;
        /// `seed` and `offset` are INT64 tensors of one element.
        pub fn dropout(mut self, probability: f64, seed: Tensor, offset: Tensor) -> Self {
            self.dropout_probability = probability;
            self.dropout_seed = Some(seed);
            self.dropout_offset = Some(offset);
            self
        }
        /// Sets the data type of the math.
        pub fn compute_dtype(mut self, dtype: DataType) -> Self {
            self.compute_dtype = dtype;
            self
        }
    };
}

fn opt_uid(t: Option<Tensor>) -> i64 {
    t.map_or(0, Tensor::uid)
}

fn opt_tensor(uid: i64) -> Option<Tensor> {
    (uid != 0).then_some(Tensor::from_uid(uid))
}

/// Options of [`Graph::sdpa`](crate::Graph::sdpa) (`cudnnfe_sdpa_options_t`).
/// `docs/attention.md` defines every option exactly.
///
/// ```
/// use cudnnfe::{DiagonalAlignment, SdpaOptions, Tensor};
/// let o = SdpaOptions::default().causal_mask(true).name("attn");
/// assert!(o.causal_mask && !o.generate_stats);
/// assert_eq!(o.attn_scale, 0.0); // 0: 1/sqrt(d)
/// assert_eq!((o.window_left, o.window_right), (None, None));
/// assert_eq!(o.diagonal_alignment, DiagonalAlignment::TopLeft);
///
/// // A sliding window of 64 keys with variable sequence lengths.
/// let (len_q, len_kv) = (Tensor::from_uid(10), Tensor::from_uid(11));
/// let o = SdpaOptions::default()
///     .padding(len_q, len_kv)
///     .window_left(64)
///     .window_right(0)
///     .diagonal_alignment(DiagonalAlignment::BottomRight);
/// assert!(o.padding_mask && o.seq_len_q == Some(len_q));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SdpaOptions {
    /// Node name; `None`: automatic.
    pub name: Option<String>,
    /// Softmax scale applied to Q·Kᵀ; 0 (the default) means `1/sqrt(d)`.
    pub attn_scale: f64,
    /// Softmax scale from a FLOAT tensor of one element (a graph input or a
    /// scalar) instead of `attn_scale`, which must then be 0.
    pub attn_scale_tensor: Option<Tensor>,
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
    /// Variable sequence lengths, given by `seq_len_q` and `seq_len_kv`
    /// (INT32 graph inputs `[b, 1, 1, 1]`). Padding rows of `o` and the
    /// statistics are unspecified on the GPU (0 and -inf on the CPU).
    pub padding_mask: bool,
    /// Valid query rows per batch (with `padding_mask`).
    pub seq_len_q: Option<Tensor>,
    /// Valid key columns per batch (with `padding_mask`).
    pub seq_len_kv: Option<Tensor>,
    /// Left bound of the diagonal band: row `i` sees column `j` only if `j >
    /// d(i) - window_left`; `None` (default): open. At least 1.
    pub window_left: Option<i64>,
    /// Right bound of the diagonal band: row `i` sees column `j` only if `j
    /// <= d(i) + window_right`; `None` (default): open. At least 0; with a
    /// causal flag only 0.
    pub window_right: Option<i64>,
    /// Where the band's diagonal starts (default top-left; a causal flag
    /// fixes it).
    pub diagonal_alignment: DiagonalAlignment,
    /// ALiBi position bias with cudnn-frontend's slopes (on a GPU it needs
    /// a right bound of 0 without bottom-right alignment, e.g.
    /// `causal_mask`; refused as not supported at validation; the CPU
    /// reference takes it with any mask).
    pub alibi_mask: bool,
    /// Drawn dropout: probability of dropping each element of P (0 to 1,
    /// exclusive); needs `dropout_seed` and `dropout_offset` when above 0.
    pub dropout_probability: f64,
    /// Drawn dropout's seed, an INT64 tensor of one element.
    pub dropout_seed: Option<Tensor>,
    /// Drawn dropout's offset, an INT64 tensor of one element.
    pub dropout_offset: Option<Tensor>,
    /// Given dropout: a mask broadcastable to `[b, h_q, s_q, s_kv]`
    /// (normally 0 or 1); P is multiplied by `dropout_scale * dropout_mask`.
    pub dropout_mask: Option<Tensor>,
    /// Given dropout's scale, a FLOAT tensor of one element.
    pub dropout_scale: Option<Tensor>,
    /// Ragged (packed, "THD") storage of q, k, v and o: an INT32 or
    /// INT64 graph input of dims `[b+1, 1, 1, 1]` holding, per batch `n`, the
    /// element offset where sequence `n` starts in the tensor's buffer
    /// (cudnn-frontend's `set_ragged_offset`). Needs `padding`; only valid
    /// rows are read or written. `None`: that tensor is not ragged.
    pub ragged_offset_q: Option<Tensor>,
    /// Ragged offsets of k (see `ragged_offset_q`).
    pub ragged_offset_k: Option<Tensor>,
    /// Ragged offsets of v (see `ragged_offset_q`).
    pub ragged_offset_v: Option<Tensor>,
    /// Ragged offsets of o (see `ragged_offset_q`).
    pub ragged_offset_o: Option<Tensor>,
    /// Paged K cache: k is then a page container `[num_pages, h_kv,
    /// page_size, d]` and this an INT32 graph input `[b, 1, pages, 1]`: key
    /// `j` of batch `n` is row `j % page_size` of page `table[n][j /
    /// page_size]`. Needs `padding`.
    pub page_table_k: Option<Tensor>,
    /// Paged V cache (as `page_table_k`, for v).
    pub page_table_v: Option<Tensor>,
    /// s_kv of a paged cache; `None`: the unpaged tensor's s_kv, else the
    /// pages' capacity.
    pub max_seq_len_kv: Option<i64>,
    /// Data type of the math; `NotSet` takes the graph's compute type.
    pub compute_dtype: DataType,
    /// Composite graph or unified operation (default `Auto`). Since 0.3.
    pub implementation: AttentionImplementation,
    /// A FLOAT `[1, h_q, 1, 1]` sink logit per query head, added to each
    /// row's softmax denominator (docs/attention.md). Since 0.3.
    pub sink_token: Option<Tensor>,
    /// A UINT8 bit-packed mask of 128x128 score tiles, `[b, h_q,
    /// ceil(s_q/128), ceil(ceil(s_kv/128)/8)]` (unified only). Since 0.3.
    pub block_mask: Option<Tensor>,
    /// Ragged offsets of a packed `page_table_k` (INT32 or INT64 `[b+1, 1,
    /// 1, 1]`): batch `n`'s entries start at element `offset[n]` of the
    /// table. `None`: not packed. Since 0.3.
    pub ragged_offset_page_table_k: Option<Tensor>,
    /// As `ragged_offset_page_table_k`, for `page_table_v`. Since 0.3.
    pub ragged_offset_page_table_v: Option<Tensor>,
    /// Ragged offsets of the stats output (with `generate_stats`; see
    /// `ragged_offset_q`). Since 0.3.
    pub ragged_offset_stats: Option<Tensor>,
    /// A score modifier's placeholder ([`Graph::begin_score_mod`](crate::Graph::begin_score_mod)).
    /// Since 0.3.
    pub score_mod: Option<Tensor>,
    /// The softmax's row max, written into this FLOAT `[b, h_q, s_q, 1]`
    /// tensor made with `Graph::input` that no op reads (cudnn-frontend's
    /// `score_max`); it becomes a graph output. Since 0.4.
    pub score_max: Option<Tensor>,
    /// The softmax's row sum of `exp(score - score_max)` (sink included),
    /// as `score_max`. Since 0.4.
    pub score_sum_exp: Option<Tensor>,
    /// The drawn dropout mask (0 or 1), written into this FLOAT `[b, h_q,
    /// s_q, s_kv]` tensor (as `score_max`); needs `dropout_seed`. Since 0.4.
    pub rng_dump: Option<Tensor>,
    /// Ragged offsets of `score_max` (see `ragged_offset_stats`). Since 0.4.
    pub ragged_offset_score_max: Option<Tensor>,
    /// Ragged offsets of `score_sum_exp` (see `ragged_offset_stats`). Since 0.4.
    pub ragged_offset_score_sum_exp: Option<Tensor>,
    /// The unified operation's softmax with unfused multiply-adds (cuDNN
    /// 9.21; ignored by the composite graph, as in cudnn-frontend). Since 0.4.
    pub unfuse_fma: bool,
}

impl SdpaOptions {
    attention_builders!();

    /// Asks for the softmax statistics output.
    pub fn generate_stats(mut self, generate: bool) -> Self {
        self.generate_stats = generate;
        self
    }
    /// Given dropout: P is multiplied by `scale * mask` (`mask`
    /// broadcastable to `[b, h_q, s_q, s_kv]`, `scale` a FLOAT tensor of
    /// one element).
    pub fn dropout_mask(mut self, mask: Tensor, scale: Tensor) -> Self {
        self.dropout_mask = Some(mask);
        self.dropout_scale = Some(scale);
        self
    }
}

/// Options of [`Graph::sdpa_backward`](crate::Graph::sdpa_backward) and
/// [`Graph::sdpa_backward_with_dbias`](crate::Graph::sdpa_backward_with_dbias)
/// (`cudnnfe_sdpa_backward_options_t`). Scale, masks, bias and dropout must
/// match the forward pass (the same seed and offset, or the same mask and
/// scale).
///
/// ```
/// let o = cudnnfe::SdpaBackwardOptions::default().causal_mask(true).deterministic(true);
/// assert!(o.causal_mask && o.deterministic && o.dropout_scale_inv.is_none());
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SdpaBackwardOptions {
    /// Node name; `None`: automatic.
    pub name: Option<String>,
    /// Softmax scale of the forward pass; 0 (the default) means `1/sqrt(d)`.
    pub attn_scale: f64,
    /// The forward's scale tensor.
    pub attn_scale_tensor: Option<Tensor>,
    /// The forward's top-left causal mask.
    pub causal_mask: bool,
    /// The forward's bottom-right causal mask.
    pub causal_mask_bottom_right: bool,
    /// The forward's additive bias.
    pub bias: Option<Tensor>,
    /// Bitwise-reproducible gradients (may be slower).
    pub deterministic: bool,
    /// The forward's variable sequence lengths (rows of dq beyond
    /// `seq_len_q[n]` and of dk, dv beyond `seq_len_kv[n]` are 0 on the CPU,
    /// unspecified on the GPU).
    pub padding_mask: bool,
    /// The forward's `seq_len_q`.
    pub seq_len_q: Option<Tensor>,
    /// The forward's `seq_len_kv`.
    pub seq_len_kv: Option<Tensor>,
    /// The forward's left band bound; `None`: open.
    pub window_left: Option<i64>,
    /// The forward's right band bound; `None`: open.
    pub window_right: Option<i64>,
    /// The forward's diagonal alignment.
    pub diagonal_alignment: DiagonalAlignment,
    /// The forward's ALiBi flag.
    pub alibi_mask: bool,
    /// The forward's dropout probability (drawn form).
    pub dropout_probability: f64,
    /// The forward's dropout seed.
    pub dropout_seed: Option<Tensor>,
    /// The forward's dropout offset.
    pub dropout_offset: Option<Tensor>,
    /// The forward's dropout mask (given form).
    pub dropout_mask: Option<Tensor>,
    /// The forward's dropout scale (given form).
    pub dropout_scale: Option<Tensor>,
    /// With `dropout_mask`: a FLOAT tensor of one element holding `1 /
    /// dropout_scale`, required. On the GPU it must be a scalar of 1 (fold
    /// the scale into the mask; `docs/attention.md`).
    pub dropout_scale_inv: Option<Tensor>,
    /// Ragged (packed, "THD") storage of q, k, v and o (also of dq, dk, dv and dO): an INT32 or
    /// INT64 graph input of dims `[b+1, 1, 1, 1]` holding, per batch `n`, the
    /// element offset where sequence `n` starts in the tensor's buffer
    /// (cudnn-frontend's `set_ragged_offset`). Needs `padding`; only valid
    /// rows are read or written. `None`: that tensor is not ragged.
    pub ragged_offset_q: Option<Tensor>,
    /// Ragged offsets of k and dk (see `ragged_offset_q`).
    pub ragged_offset_k: Option<Tensor>,
    /// Ragged offsets of v and dv (see `ragged_offset_q`).
    pub ragged_offset_v: Option<Tensor>,
    /// Ragged offsets of o and dO (see `ragged_offset_q`).
    pub ragged_offset_o: Option<Tensor>,
    /// Data type of the math; `NotSet` takes the graph's compute type.
    pub compute_dtype: DataType,
    /// Ragged offsets of the stats input (see `ragged_offset_q`). Since 0.3.
    pub ragged_offset_stats: Option<Tensor>,
    /// The forward's score modifier, built again in this graph (a
    /// placeholder of [`Graph::begin_score_mod`](crate::Graph::begin_score_mod)). Since 0.3.
    pub score_mod: Option<Tensor>,
    /// The gradient's score modifier, dS' -> dS (as `score_mod`). Since 0.3.
    pub score_mod_bprop: Option<Tensor>,
    /// The forward's sink logits, a FLOAT `[1, h_q, 1, 1]` tensor (read only
    /// for `dsink_token`). Since 0.3.
    pub sink_token: Option<Tensor>,
    /// The sink's gradient: a FLOAT `[1, h_q, 1, 1]` tensor made with
    /// `Graph::input` that no op reads; the node writes it and it becomes a
    /// graph output (docs/attention.md). Needs `sink_token`. Since 0.3.
    pub dsink_token: Option<Tensor>,
    /// cudnn-frontend's bound on a ragged layout's total query tokens; only
    /// checked (refused without ragged offsets on a GPU). 0: none. Since 0.4.
    pub max_total_seq_len_q: i64,
    /// As `max_total_seq_len_q`, for the keys and values. Since 0.4.
    pub max_total_seq_len_kv: i64,
}

impl SdpaBackwardOptions {
    attention_builders!();

    /// Asks for bitwise-reproducible gradients.
    pub fn deterministic(mut self, deterministic: bool) -> Self {
        self.deterministic = deterministic;
        self
    }
    /// The forward's given dropout (`mask`, `scale`) and `scale_inv`, a
    /// FLOAT tensor of one element holding `1 / scale`.
    pub fn dropout_mask(mut self, mask: Tensor, scale: Tensor, scale_inv: Tensor) -> Self {
        self.dropout_mask = Some(mask);
        self.dropout_scale = Some(scale);
        self.dropout_scale_inv = Some(scale_inv);
        self
    }
}

/// Options of the normalizations ([`Graph::layernorm`](crate::Graph::layernorm),
/// [`Graph::rmsnorm`](crate::Graph::rmsnorm), [`Graph::batchnorm`](crate::Graph::batchnorm),
/// [`Graph::instancenorm`](crate::Graph::instancenorm),
/// [`Graph::adalayernorm`](crate::Graph::adalayernorm) and their inference
/// and backward ops) (`cudnnfe_norm_options_t`).
///
/// ```
/// use cudnnfe::{NormOptions, NormPhase};
/// let o = NormOptions::default();
/// assert_eq!((o.phase, o.epsilon, o.zero_centered_gamma), (NormPhase::Training, 1e-5, false));
/// assert_eq!(o.momentum, 0.1);
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
    /// `y` uses `1 + scale` instead of `scale` (zero-centred gamma);
    /// offered by layer norm, RMS norm and adaptive layer norm.
    pub zero_centered_gamma: bool,
    /// Data type of the math; `NotSet` takes the graph's compute type.
    pub compute_dtype: DataType,
    /// Batch norm with running statistics: the weight of this batch's
    /// statistics in the update, in `[0, 1]` (default 0.1; `1/(1 + n)` at
    /// the n-th call for a cumulative average).
    pub momentum: f64,
    /// A one-element FLOAT graph input holding epsilon, read at execute
    /// instead of `epsilon` (forward norms; pass-by-value for the GPU).
    pub epsilon_tensor: Option<Tensor>,
    /// As `epsilon_tensor`, for batch norm's momentum.
    pub momentum_tensor: Option<Tensor>,
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
    /// Sets batch norm's running-statistics momentum.
    pub fn momentum(mut self, momentum: f64) -> Self {
        self.momentum = momentum;
        self
    }
    /// Sets the data type of the math.
    pub fn compute_dtype(mut self, dtype: DataType) -> Self {
        self.compute_dtype = dtype;
        self
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
}

/// Options of the layout ops [`Graph::reshape`](crate::Graph::reshape),
/// [`transpose`](crate::Graph::transpose), [`slice`](crate::Graph::slice)
/// and [`concatenate`](crate::Graph::concatenate) (`cudnnfe_layout_options_t`).
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct LayoutOptions {
    /// Node name; `None`: automatic.
    pub name: Option<String>,
}

impl LayoutOptions {
    /// Sets the node name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// Options of [`Graph::resample`](crate::Graph::resample)
/// (`cudnnfe_resample_options_t`): pooling (window, stride, padding) or
/// upsampling (scale). Spatial values are per spatial dimension, in the
/// tensor's logical order (H, W for NCHW).
///
/// ```
/// use cudnnfe::{PaddingMode, ResampleMode, ResampleOptions};
/// let o = ResampleOptions::default();
/// assert_eq!((o.mode, o.padding_mode), (ResampleMode::MaxPool, PaddingMode::Auto));
/// assert_eq!((o.window, o.stride), ([2, 2, 2], [2, 2, 2]));
///
/// let o = ResampleOptions::default()
///     .mode(ResampleMode::AvgPoolExcludePadding)
///     .window([3, 3])
///     .stride([2, 2])
///     .padding([1, 1]);
/// assert_eq!(o.pre_padding, [1, 1, 0]);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ResampleOptions {
    /// Node name; `None`: automatic.
    pub name: Option<String>,
    /// Pooling or upsampling mode (default max pooling).
    pub mode: ResampleMode,
    /// Spatial rank (1 to 3); 0 takes it from x's rank minus 2.
    pub spatial_dims: i32,
    /// Pooling window per spatial dimension (default 2).
    pub window: [i64; 3],
    /// Pooling stride per spatial dimension (default 2).
    pub stride: [i64; 3],
    /// Pooling padding before each spatial dimension (default 0, each
    /// smaller than the window).
    pub pre_padding: [i64; 3],
    /// Pooling padding after each spatial dimension (default 0).
    pub post_padding: [i64; 3],
    /// What pooling reads outside the image (default: by mode).
    pub padding_mode: PaddingMode,
    /// Upsampling factor per spatial dimension (default 2).
    pub scale: [i64; 3],
    /// Max pooling: also write the position of each maximum inside its
    /// window (INT8 unless its type is set).
    pub generate_index: bool,
    /// Data type of the math; `NotSet` takes the graph's compute type.
    pub compute_dtype: DataType,
}

impl ResampleOptions {
    /// Sets the node name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
    /// Sets the mode.
    pub fn mode(mut self, mode: ResampleMode) -> Self {
        self.mode = mode;
        self
    }
    /// Sets the spatial rank (0: from x).
    pub fn spatial_dims(mut self, spatial_dims: i32) -> Self {
        self.spatial_dims = spatial_dims;
        self
    }
    /// Sets the pooling window of each given spatial dimension.
    pub fn window<const N: usize>(mut self, window: [i64; N]) -> Self {
        spatial(&mut self.window, window);
        self
    }
    /// Sets the pooling stride of each given spatial dimension.
    pub fn stride<const N: usize>(mut self, stride: [i64; N]) -> Self {
        spatial(&mut self.stride, stride);
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
    /// Sets what pooling reads outside the image.
    pub fn padding_mode(mut self, mode: PaddingMode) -> Self {
        self.padding_mode = mode;
        self
    }
    /// Sets the upsampling factor of each given spatial dimension.
    pub fn scale<const N: usize>(mut self, scale: [i64; N]) -> Self {
        spatial(&mut self.scale, scale);
        self
    }
    /// Asks max pooling for the index output.
    pub fn generate_index(mut self, generate: bool) -> Self {
        self.generate_index = generate;
        self
    }
    /// Sets the data type of the math.
    pub fn compute_dtype(mut self, dtype: DataType) -> Self {
        self.compute_dtype = dtype;
        self
    }
}

/// Options of [`Graph::rng`](crate::Graph::rng) (`cudnnfe_rng_options_t`).
///
/// ```
/// use cudnnfe::{RngDistribution, RngOptions};
/// let o = RngOptions::default();
/// assert_eq!((o.distribution, o.bernoulli_probability), (RngDistribution::Bernoulli, 0.5));
/// let o = RngOptions::default().normal(1.0, 0.5).seed(42);
/// assert_eq!((o.distribution, o.normal_mean, o.normal_stddev, o.seed), (RngDistribution::Normal, 1.0, 0.5, 42));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct RngOptions {
    /// Node name; `None`: automatic.
    pub name: Option<String>,
    /// The distribution (default Bernoulli).
    pub distribution: RngDistribution,
    /// Bernoulli: probability of a 1 (default 0.5).
    pub bernoulli_probability: f64,
    /// Uniform: lower end, included (default 0).
    pub uniform_min: f64,
    /// Uniform: upper end, excluded (default 1).
    pub uniform_max: f64,
    /// Normal: mean (default 0).
    pub normal_mean: f64,
    /// Normal: standard deviation (default 1).
    pub normal_stddev: f64,
    /// The seed when no seed tensor is given (offset 0); default 0.
    pub seed: i64,
    /// Data type of the math; `NotSet` takes the graph's compute type.
    pub compute_dtype: DataType,
}

impl RngOptions {
    /// Sets the node name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
    /// Bernoulli: 1 with `probability`, else 0.
    pub fn bernoulli(mut self, probability: f64) -> Self {
        self.distribution = RngDistribution::Bernoulli;
        self.bernoulli_probability = probability;
        self
    }
    /// Uniform on `[min, max)`.
    pub fn uniform(mut self, min: f64, max: f64) -> Self {
        self.distribution = RngDistribution::Uniform;
        self.uniform_min = min;
        self.uniform_max = max;
        self
    }
    /// Normal with `mean` and `stddev`.
    pub fn normal(mut self, mean: f64, stddev: f64) -> Self {
        self.distribution = RngDistribution::Normal;
        self.normal_mean = mean;
        self.normal_stddev = stddev;
        self
    }
    /// Sets the distribution (its parameters keep their values).
    pub fn distribution(mut self, distribution: RngDistribution) -> Self {
        self.distribution = distribution;
        self
    }
    /// Sets the seed used when no seed tensor is given.
    pub fn seed(mut self, seed: i64) -> Self {
        self.seed = seed;
        self
    }
    /// Sets the data type of the math.
    pub fn compute_dtype(mut self, dtype: DataType) -> Self {
        self.compute_dtype = dtype;
        self
    }
}

/// Options of [`Graph::sdpa_fp8`](crate::Graph::sdpa_fp8)
/// (`cudnnfe_sdpa_fp8_options_t`).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SdpaFp8Options {
    /// Node name; `None`: automatic.
    pub name: Option<String>,
    /// Softmax scale applied to Q·Kᵀ (after the descales); 0 (the default)
    /// means `1/sqrt(d)`.
    pub attn_scale: f64,
    /// Also write the statistics `[b, h_q, s_q, 1]` FLOAT for backward.
    pub generate_stats: bool,
    /// Causal mask aligned at the top-left corner.
    pub causal_mask: bool,
    /// Left bound of the diagonal band (sliding window), as
    /// [`SdpaOptions::window_left`]; `None` (default): open.
    pub window_left: Option<i64>,
    /// Right bound of the diagonal band, as [`SdpaOptions::window_right`];
    /// `None` (default): open; with `causal_mask` only 0.
    pub window_right: Option<i64>,
    /// Where the band's diagonal starts (default top-left; a bottom-right
    /// causal mask is `window_right` 0 with `BottomRight`).
    pub diagonal_alignment: DiagonalAlignment,
    /// Variable sequence lengths, as [`SdpaOptions::padding_mask`] (since 0.3).
    pub padding_mask: bool,
    /// Valid query rows per batch (with `padding_mask`).
    pub seq_len_q: Option<Tensor>,
    /// Valid key columns per batch (with `padding_mask`).
    pub seq_len_kv: Option<Tensor>,
    /// ALiBi, as [`SdpaOptions::alibi_mask`] (since 0.3).
    pub alibi_mask: bool,
    /// Drawn dropout's probability, as [`SdpaOptions::dropout_probability`]
    /// (since 0.3).
    pub dropout_probability: f64,
    /// Drawn dropout's seed, an INT64 tensor of one element.
    pub dropout_seed: Option<Tensor>,
    /// Drawn dropout's offset, an INT64 tensor of one element.
    pub dropout_offset: Option<Tensor>,
    /// Given dropout's mask, as [`SdpaOptions::dropout_mask`].
    pub dropout_mask: Option<Tensor>,
    /// Given dropout's scale, a FLOAT tensor of one element.
    pub dropout_scale: Option<Tensor>,
    /// Paged K cache, as [`SdpaOptions::page_table_k`] (since 0.3).
    pub page_table_k: Option<Tensor>,
    /// Paged V cache, as [`SdpaOptions::page_table_v`].
    pub page_table_v: Option<Tensor>,
    /// A paged cache's logical s_kv; `None` (default): inferred.
    pub max_seq_len_kv: Option<i64>,
    /// Sink logits per query head, as [`SdpaOptions::sink_token`] (since 0.3).
    pub sink_token: Option<Tensor>,
}

impl SdpaFp8Options {
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
    /// Asks for the statistics output.
    pub fn generate_stats(mut self, generate: bool) -> Self {
        self.generate_stats = generate;
        self
    }
    /// Sets the top-left causal mask.
    pub fn causal_mask(mut self, causal: bool) -> Self {
        self.causal_mask = causal;
        self
    }
}

/// Options of [`Graph::sdpa_fp8_backward`](crate::Graph::sdpa_fp8_backward)
/// (`cudnnfe_sdpa_fp8_backward_options_t`); must match the forward pass.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SdpaFp8BackwardOptions {
    /// Node name; `None`: automatic.
    pub name: Option<String>,
    /// The forward's softmax scale; 0 (the default) means `1/sqrt(d)`.
    pub attn_scale: f64,
    /// The forward's top-left causal mask.
    pub causal_mask: bool,
    /// The forward's diagonal band (see [`SdpaFp8Options`]).
    pub window_left: Option<i64>,
    /// The forward's right bound of the band.
    pub window_right: Option<i64>,
    /// The forward's band alignment.
    pub diagonal_alignment: DiagonalAlignment,
    /// The forward's padding (since 0.3; see [`SdpaFp8Options`]).
    pub padding_mask: bool,
    /// The forward's valid query rows per batch.
    pub seq_len_q: Option<Tensor>,
    /// The forward's valid key columns per batch.
    pub seq_len_kv: Option<Tensor>,
    /// The forward's drawn dropout probability (since 0.3).
    pub dropout_probability: f64,
    /// The forward's dropout seed.
    pub dropout_seed: Option<Tensor>,
    /// The forward's dropout offset.
    pub dropout_offset: Option<Tensor>,
    /// The forward's given dropout mask.
    pub dropout_mask: Option<Tensor>,
    /// The forward's given dropout scale.
    pub dropout_scale: Option<Tensor>,
    /// With `dropout_mask`: 1 / dropout_scale, as
    /// [`SdpaBackwardOptions::dropout_scale_inv`].
    pub dropout_scale_inv: Option<Tensor>,
}

impl SdpaFp8BackwardOptions {
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
}

/// Adds the `name` builder shared by the options of one node.
macro_rules! name_builder {
    () => {
        /// Sets the node name.
        pub fn name(mut self, name: impl Into<String>) -> Self {
            self.name = Some(name.into());
            self
        }
    };
}

/// Options of [`Graph::genstats`](crate::Graph::genstats)
/// (`cudnnfe_genstats_options_t`; since 0.3).
///
/// ```
/// let o = cudnnfe::GenstatsOptions::default().name("stats");
/// assert_eq!((o.name.as_deref(), o.compute_dtype), (Some("stats"), cudnnfe::DataType::NotSet));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct GenstatsOptions {
    /// Node name; `None`: automatic.
    pub name: Option<String>,
    /// Data type of the math; `NotSet` takes the graph's compute type.
    pub compute_dtype: DataType,
}

impl GenstatsOptions {
    name_builder!();
}

/// Options of [`Graph::paged_cache_load`](crate::Graph::paged_cache_load)
/// (`cudnnfe_paged_cache_load_options_t`; since 0.4, experimental).
///
/// ```
/// let o = cudnnfe::PagedCacheLoadOptions::default().name("load_k");
/// assert_eq!((o.name.as_deref(), o.compute_dtype), (Some("load_k"), cudnnfe::DataType::NotSet));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct PagedCacheLoadOptions {
    /// Node name; `None`: automatic.
    pub name: Option<String>,
    /// Data type of the math; `NotSet` takes the graph's compute type.
    pub compute_dtype: DataType,
}

impl PagedCacheLoadOptions {
    name_builder!();
}

/// Options of [`Graph::bn_finalize`](crate::Graph::bn_finalize)
/// (`cudnnfe_bn_finalize_options_t`; since 0.3).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct BnFinalizeOptions {
    /// Node name; `None`: automatic.
    pub name: Option<String>,
    /// Data type of the math; `NotSet` takes the graph's compute type.
    pub compute_dtype: DataType,
}

impl BnFinalizeOptions {
    name_builder!();
}

/// Options of [`Graph::dbn_weight`](crate::Graph::dbn_weight)
/// (`cudnnfe_dbn_weight_options_t`; since 0.3).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct DbnWeightOptions {
    /// Node name; `None`: automatic.
    pub name: Option<String>,
    /// Data type of the math; `NotSet` takes the graph's compute type.
    pub compute_dtype: DataType,
}

impl DbnWeightOptions {
    name_builder!();
}

/// Options of [`Graph::block_scale_quantize`](crate::Graph::block_scale_quantize)
/// and [`Graph::block_scale_dequantize`](crate::Graph::block_scale_dequantize)
/// (`cudnnfe_block_scale_options_t`; docs/layout-ops.md, "Block scaling").
///
/// ```
/// use cudnnfe::{BlockScaleOptions, DataType};
/// let o = BlockScaleOptions::default();
/// assert_eq!((o.block_size, o.axis, o.transpose), (32, -1, false));
/// assert_eq!(o.y_dtype, DataType::Fp8E4M3);
/// let o = o.block_size(16).axis(1).y_dtype(DataType::Fp8E5M2);
/// assert_eq!((o.block_size, o.axis), (16, 1));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct BlockScaleOptions {
    /// Node name; `None`: automatic.
    pub name: Option<String>,
    /// Elements per block along `axis` (default 32, the MX block); x's dim
    /// `axis` must be a multiple of it.
    pub block_size: i32,
    /// The blocked dim; negative counts from the end (default -1).
    pub axis: i32,
    /// Quantize only: make `axis` the innermost (packed) dim of y and the
    /// scale, whatever x's layout (default false).
    pub transpose: bool,
    /// Quantize only: y's type when y's type is not set (default
    /// `Fp8E4M3`; or `Fp8E5M2`).
    pub y_dtype: DataType,
}

impl BlockScaleOptions {
    name_builder!();
}

/// Options of [`Graph::moe_grouped_matmul`](crate::Graph::moe_grouped_matmul)
/// and [`Graph::moe_grouped_matmul_backward`](crate::Graph::moe_grouped_matmul_backward)
/// (`cudnnfe_moe_grouped_matmul_options_t`; docs/moe.md; since 0.3).
///
/// ```
/// use cudnnfe::{MoeGroupedMatmulMode, MoeGroupedMatmulOptions};
/// let o = MoeGroupedMatmulOptions::default();
/// assert_eq!((o.mode, o.top_k), (MoeGroupedMatmulMode::None, 1));
/// let o = o.mode(MoeGroupedMatmulMode::Scatter).top_k(2);
/// assert_eq!((o.mode, o.top_k), (MoeGroupedMatmulMode::Scatter, 2));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct MoeGroupedMatmulOptions {
    /// Node name; `None`: automatic.
    pub name: Option<String>,
    /// Routing mode (default `None`; the backward takes `None` only).
    pub mode: MoeGroupedMatmulMode,
    /// Scatter: experts per token (default 1, at least 1).
    pub top_k: i32,
    /// cuDNN's math precision; `NotSet` takes the graph's compute type.
    pub compute_dtype: DataType,
}

impl MoeGroupedMatmulOptions {
    name_builder!();
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
/// assert_eq!((o.sm_count, o.sm_version), (0, 0)); // the GPU's
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
    /// True: the plan may run with other shapes given at execute
    /// (`cudnnfe_graph_execute_with_overrides`; default false; since 0.3).
    pub override_shape_enabled: bool,
    /// True: a dynamic-shape graph (`dynamic_shape_enabled`; default
    /// false; since 0.3).
    pub dynamic_shape_enabled: bool,
    /// A kernel cache GPU builds share compiled kernels through (implies
    /// dynamic shapes; default none; since 0.3).
    pub kernel_cache: Option<Arc<KernelCache>>,
    /// Build for the GPU these describe without using one (build with no
    /// handle; the graph then cannot run here: serialize its plan and load it
    /// on such a GPU). Default none; since 0.3, experimental.
    pub device_properties: Option<Arc<DeviceProperties>>,
    /// The number of SMs a GPU plan may use (cuDNN's heuristics SM count
    /// target, cudnn-frontend's `sm_count`); 0 (default): all of the GPU's.
    /// Negative: [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument)
    /// from the library. Since 0.4.
    pub sm_count: i32,
    /// The architecture whose support rules validation applies (90 for
    /// compute capability 9.0; cudnn-frontend's `sm_version`); plans are
    /// still built for the GPU in use. 0 (default): that GPU's. Negative:
    /// an invalid argument. Since 0.4.
    pub sm_version: i32,
    /// Verify mode (`docs/verify.md`; since 0.4): with [`VerifyMode::On`] the
    /// first execute of each plan (and the first run of each bound
    /// execution) copies back the inputs a sample of output elements depends
    /// on, computes that sample with the CPU reference and fails with
    /// [`ErrorKind::VerifyFailed`](crate::ErrorKind::VerifyFailed) when one
    /// is off by more than the tolerance. Default [`VerifyMode::FromEnv`]
    /// (on when `CUDNNFE_VERIFY=1`).
    pub verify: VerifyMode,
    /// Output elements sampled per output tensor; 0 (default): 64, or
    /// `CUDNNFE_VERIFY_SAMPLES` (since 0.4).
    pub verify_samples: u32,
    /// Relative tolerance of floating outputs; 0.0 (default): by data type
    /// (since 0.4).
    pub verify_rtol: f64,
}

/// Build options as the C struct, with the memory its pointers point into.
pub(crate) struct RawBuildOptions {
    pub(crate) raw: sys::cudnnfe_build_options_t,
    _engines: Vec<i64>,
    _cache_dir: Option<CString>,
}

impl Default for BuildOptions {
    fn default() -> Self {
        let raw = init(sys::cudnnfe_build_options_init_sized);
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
            override_shape_enabled: raw.override_shape_enabled != 0,
            dynamic_shape_enabled: raw.dynamic_shape_enabled != 0,
            kernel_cache: None,
            device_properties: None,
            sm_count: raw.sm_count,
            sm_version: raw.sm_version,
            verify: VerifyMode::from_raw(raw.verify),
            verify_samples: raw.verify_samples.max(0) as u32,
            verify_rtol: raw.verify_rtol,
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

    /// Builds the graph to take execute-time shapes.
    pub fn override_shape_enabled(mut self, enabled: bool) -> Self {
        self.override_shape_enabled = enabled;
        self
    }

    /// Builds a dynamic-shape graph.
    pub fn dynamic_shape_enabled(mut self, enabled: bool) -> Self {
        self.dynamic_shape_enabled = enabled;
        self
    }

    /// Shares compiled kernels through `cache` (a dynamic-shape build).
    pub fn kernel_cache(mut self, cache: Arc<KernelCache>) -> Self {
        self.kernel_cache = Some(cache);
        self
    }

    /// Builds for the GPU `properties` describe, without using a GPU.
    pub fn device_properties(mut self, properties: Arc<DeviceProperties>) -> Self {
        self.device_properties = Some(properties);
        self
    }

    /// Lets a GPU plan use `sms` SMs (0: all of the GPU's).
    pub fn sm_count(mut self, sms: i32) -> Self {
        self.sm_count = sms;
        self
    }

    /// Validates for architecture `sm` (e.g. 90; 0: the GPU's).
    pub fn sm_version(mut self, sm: i32) -> Self {
        self.sm_version = sm;
        self
    }

    /// Sets verify mode ([`VerifyMode::On`]: check each plan's first execute
    /// against the CPU reference).
    pub fn verify(mut self, mode: VerifyMode) -> Self {
        self.verify = mode;
        self
    }

    /// Samples `n` elements of each output in verify mode (0: the default).
    pub fn verify_samples(mut self, n: u32) -> Self {
        self.verify_samples = n;
        self
    }

    /// Sets verify mode's relative tolerance of floating outputs (0.0: by
    /// data type).
    pub fn verify_rtol(mut self, rtol: f64) -> Self {
        self.verify_rtol = rtol;
        self
    }

    pub(crate) fn to_raw(&self) -> Result<RawBuildOptions> {
        let mut raw = init(sys::cudnnfe_build_options_init_sized);
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
        raw.override_shape_enabled = self.override_shape_enabled as i32;
        raw.dynamic_shape_enabled = self.dynamic_shape_enabled as i32;
        raw.verify = self.verify.as_raw();
        raw.verify_samples = i32::try_from(self.verify_samples).unwrap_or(i32::MAX);
        raw.verify_rtol = self.verify_rtol;
        raw.kernel_cache = self
            .kernel_cache
            .as_ref()
            .map_or(std::ptr::null_mut(), |c| c.raw());
        raw.device_properties = self
            .device_properties
            .as_ref()
            .map_or(std::ptr::null(), |p| p.raw());
        raw.sm_count = self.sm_count;
        raw.sm_version = self.sm_version;
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

/// The options the attention option sets share (`cudnnfe_attention_common_t`,
/// since 0.4): fill it once and give it to a forward and its backward with
/// [`SdpaOptions::common`], [`SdpaBackwardOptions::common`],
/// [`SdpaFp8Options::common`] or [`SdpaFp8BackwardOptions::common`], so that
/// they cannot disagree. Each field means what the field of the same name of
/// [`SdpaOptions`] means.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct AttentionCommon {
    /// Softmax scale on Q·Kᵀ; 0 (the default): `1/sqrt(d)`.
    pub attn_scale: f64,
    /// Causal mask aligned at the top-left corner.
    pub causal_mask: bool,
    /// Left bound of the diagonal band; `None` (default): open.
    pub window_left: Option<i64>,
    /// Right bound of the diagonal band; `None` (default): open.
    pub window_right: Option<i64>,
    /// Where the band's diagonal starts (default top-left).
    pub diagonal_alignment: DiagonalAlignment,
    /// Variable sequence lengths, given by `seq_len_q` and `seq_len_kv`.
    pub padding_mask: bool,
    /// Valid query rows per batch (with `padding_mask`).
    pub seq_len_q: Option<Tensor>,
    /// Valid key columns per batch (with `padding_mask`).
    pub seq_len_kv: Option<Tensor>,
    /// ALiBi (the FP8 backward has none: refused there).
    pub alibi_mask: bool,
    /// Drawn dropout's probability.
    pub dropout_probability: f64,
    /// Drawn dropout's seed tensor.
    pub dropout_seed: Option<Tensor>,
    /// Drawn dropout's offset tensor.
    pub dropout_offset: Option<Tensor>,
    /// Given dropout's mask.
    pub dropout_mask: Option<Tensor>,
    /// Given dropout's scale tensor.
    pub dropout_scale: Option<Tensor>,
}

impl Default for AttentionCommon {
    fn default() -> Self {
        let raw = init(sys::cudnnfe_attention_common_init_sized);
        AttentionCommon {
            attn_scale: raw.attn_scale,
            causal_mask: raw.causal_mask != 0,
            window_left: (raw.window_left != -1).then_some(raw.window_left),
            window_right: (raw.window_right != -1).then_some(raw.window_right),
            diagonal_alignment: DiagonalAlignment::from_raw(raw.diagonal_alignment),
            padding_mask: raw.padding_mask != 0,
            seq_len_q: opt_tensor(raw.seq_len_q),
            seq_len_kv: opt_tensor(raw.seq_len_kv),
            alibi_mask: raw.alibi_mask != 0,
            dropout_probability: raw.dropout_probability,
            dropout_seed: opt_tensor(raw.dropout_seed),
            dropout_offset: opt_tensor(raw.dropout_offset),
            dropout_mask: opt_tensor(raw.dropout_mask),
            dropout_scale: opt_tensor(raw.dropout_scale),
        }
    }
}

impl AttentionCommon {
    fn to_raw(&self) -> sys::cudnnfe_attention_common_t {
        let mut raw = init(sys::cudnnfe_attention_common_init_sized);
        raw.attn_scale = self.attn_scale;
        raw.causal_mask = i32::from(self.causal_mask);
        raw.window_left = self.window_left.unwrap_or(-1);
        raw.window_right = self.window_right.unwrap_or(-1);
        raw.diagonal_alignment = self.diagonal_alignment.as_raw();
        raw.padding_mask = i32::from(self.padding_mask);
        raw.seq_len_q = opt_uid(self.seq_len_q);
        raw.seq_len_kv = opt_uid(self.seq_len_kv);
        raw.alibi_mask = i32::from(self.alibi_mask);
        raw.dropout_probability = self.dropout_probability;
        raw.dropout_seed = opt_uid(self.dropout_seed);
        raw.dropout_offset = opt_uid(self.dropout_offset);
        raw.dropout_mask = opt_uid(self.dropout_mask);
        raw.dropout_scale = opt_uid(self.dropout_scale);
        raw
    }
}

/// `common` for an attention option set: the library copies the shared
/// fields into its C struct (`set`), which are then read back, so the rule
/// (what the set takes, what it refuses) is the library's.
macro_rules! attention_common {
    ($options:ty, $set:ident $(, $alibi:ident)?) => {
        impl $options {
            /// Takes the shared attention options of `common`
            /// ([`AttentionCommon`]); the other fields are left as they are
            /// (since 0.4).
            pub fn common(mut self, common: &AttentionCommon) -> Result<Self> {
                let mut raw = self.to_raw(&None);
                let shared = common.to_raw();
                // SAFETY: two live structs of this crate's header, read and
                // written during the call only.
                crate::error::check_thread(unsafe { sys::$set(&mut raw, &shared) })?;
                self.attn_scale = raw.attn_scale;
                self.causal_mask = raw.causal_mask != 0;
                self.window_left = (raw.window_left != -1).then_some(raw.window_left);
                self.window_right = (raw.window_right != -1).then_some(raw.window_right);
                self.diagonal_alignment = DiagonalAlignment::from_raw(raw.diagonal_alignment);
                self.padding_mask = raw.padding_mask != 0;
                self.seq_len_q = opt_tensor(raw.seq_len_q);
                self.seq_len_kv = opt_tensor(raw.seq_len_kv);
                $(self.$alibi = raw.$alibi != 0;)?
                self.dropout_probability = raw.dropout_probability;
                self.dropout_seed = opt_tensor(raw.dropout_seed);
                self.dropout_offset = opt_tensor(raw.dropout_offset);
                self.dropout_mask = opt_tensor(raw.dropout_mask);
                self.dropout_scale = opt_tensor(raw.dropout_scale);
                Ok(self)
            }
        }
    };
}

attention_common!(SdpaOptions, cudnnfe_sdpa_options_set_common, alibi_mask);
attention_common!(
    SdpaBackwardOptions,
    cudnnfe_sdpa_backward_options_set_common,
    alibi_mask
);
attention_common!(
    SdpaFp8Options,
    cudnnfe_sdpa_fp8_options_set_common,
    alibi_mask
);
attention_common!(
    SdpaFp8BackwardOptions,
    cudnnfe_sdpa_fp8_backward_options_set_common
);

// Default, to_raw and the per-field builder setters of the op options above,
// generated from abi/manifest.json by bindings/rust/gen_options.py.
include!("options_gen.rs");
