//! Data types, modes, targets and the [`Tensor`] id.

use std::fmt;

use cudnnfe_sys as sys;

use crate::error::static_str;

/// Defines a `#[non_exhaustive]` enum over one of the C ABI's int32
/// enumerations, with an `Other(i32)` variant for values this crate does not
/// know (a newer library's, or a deliberately invalid one for tests).
macro_rules! int_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $raw:path, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )*
            /// A value this version of the crate has no name for; passed to
            /// and from the library unchanged.
            Other(i32),
        }

        impl $name {
            /// The value from its C integer (unknown values give `Other`).
            pub fn from_raw(raw: i32) -> Self {
                match raw {
                    $( $raw => $name::$variant, )*
                    other => $name::Other(other),
                }
            }

            /// The C integer of this value.
            pub fn as_raw(self) -> i32 {
                match self {
                    $( $name::$variant => $raw, )*
                    $name::Other(raw) => raw,
                }
            }
        }

        impl From<$name> for i32 {
            fn from(value: $name) -> i32 {
                value.as_raw()
            }
        }
    };
}

int_enum! {
    /// Element type of a tensor or of an operation's math (`cudnnfe_dtype_t`).
    ///
    /// Host buffers hold: `f32` for `Float`, `f64` for `Double`, `u16` bit
    /// patterns for `Half` and `BFloat16` (see [`f16_from_f32`](crate::f16_from_f32)),
    /// `i8`, `i32`, `i64` for the integer types, `u8` for `UInt8`, `Boolean`
    /// (0 or 1) and the FP8 types.
    pub enum DataType {
        /// Not set: resolved from the graph's defaults at validation.
        NotSet = sys::CUDNNFE_DTYPE_NOT_SET,
        /// 32-bit IEEE float.
        Float = sys::CUDNNFE_DTYPE_FLOAT,
        /// 16-bit IEEE float (FP16).
        Half = sys::CUDNNFE_DTYPE_HALF,
        /// bfloat16.
        BFloat16 = sys::CUDNNFE_DTYPE_BFLOAT16,
        /// 8-bit float, 4 exponent and 3 mantissa bits.
        Fp8E4M3 = sys::CUDNNFE_DTYPE_FP8_E4M3,
        /// 8-bit float, 5 exponent and 2 mantissa bits.
        Fp8E5M2 = sys::CUDNNFE_DTYPE_FP8_E5M2,
        /// Signed 8-bit integer.
        Int8 = sys::CUDNNFE_DTYPE_INT8,
        /// Signed 32-bit integer.
        Int32 = sys::CUDNNFE_DTYPE_INT32,
        /// Signed 64-bit integer.
        Int64 = sys::CUDNNFE_DTYPE_INT64,
        /// One byte per element, 0 or 1.
        Boolean = sys::CUDNNFE_DTYPE_BOOLEAN,
        /// Unsigned 8-bit integer.
        UInt8 = sys::CUDNNFE_DTYPE_UINT8,
        /// 64-bit IEEE float.
        Double = sys::CUDNNFE_DTYPE_DOUBLE,
        /// 8-bit power-of-two scale (2^(byte - 127)) of block-scaled data.
        Fp8E8M0 = sys::CUDNNFE_DTYPE_FP8_E8M0,
        /// Booleans bit-packed as cuDNN stores them: element offset `o` is bit
        /// `o % 8` (least significant first) of byte `o / 8`.
        BooleanPacked = sys::CUDNNFE_DTYPE_BOOLEAN_PACKED,
    }
}

impl DataType {
    /// Size of one element in bytes; 0 for `NotSet` and unknown values.
    pub fn size(self) -> usize {
        // SAFETY: a pure function of an integer.
        unsafe { sys::cudnnfe_dtype_size(self.as_raw()) }
    }

    /// The library's name of the type, e.g. `"BFLOAT16"` (`"UNKNOWN"` for
    /// values it does not know).
    pub fn name(self) -> &'static str {
        // SAFETY: cudnnfe_dtype_name returns a static string, never NULL.
        unsafe { static_str(sys::cudnnfe_dtype_name(self.as_raw())) }
    }
}

impl Default for DataType {
    /// [`DataType::NotSet`], what the C init functions use.
    fn default() -> Self {
        DataType::NotSet
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataType::Other(raw) => write!(f, "dtype {raw}"),
            _ => f.write_str(self.name()),
        }
    }
}

int_enum! {
    /// Where a built graph runs (`cudnnfe_target_t`).
    pub enum Target {
        /// The GPU when cuDNN and a GPU load, else the CPU reference.
        Auto = sys::CUDNNFE_TARGET_AUTO,
        /// cuDNN on the GPU; building fails if it is unavailable.
        Gpu = sys::CUDNNFE_TARGET_GPU,
        /// Plain loops on host buffers (no GPU needed).
        CpuReference = sys::CUDNNFE_TARGET_CPU_REFERENCE,
    }
}

int_enum! {
    /// A cuDNN heuristic mode tried when building for the GPU
    /// (`cudnnfe_heur_mode_t`).
    pub enum HeurMode {
        /// Heuristic mode A (fast, the default first choice).
        A = sys::CUDNNFE_HEUR_MODE_A,
        /// Heuristic mode B (slower, sometimes better engines).
        B = sys::CUDNNFE_HEUR_MODE_B,
        /// Fallback engines.
        Fallback = sys::CUDNNFE_HEUR_MODE_FALLBACK,
    }
}

int_enum! {
    /// Convolution or cross-correlation (`cudnnfe_conv_mode_t`).
    pub enum ConvMode {
        /// Cross-correlation, what frameworks call convolution (the default).
        CrossCorrelation = sys::CUDNNFE_CONV_MODE_CROSS_CORRELATION,
        /// True convolution (flipped filter).
        Convolution = sys::CUDNNFE_CONV_MODE_CONVOLUTION,
    }
}

int_enum! {
    /// Elementwise operation (`cudnnfe_pointwise_mode_t`).
    ///
    /// Unary modes read `in0`; binary modes compute `in0 <op> in1`; `*Bwd`
    /// modes read `in0 = dy` and `in1 = x` and write `dx`; `BinarySelect`
    /// writes `in2 ? in0 : in1`; `GenIndex` writes each element's index along
    /// the option's `axis` (INT32).
    pub enum PointwiseMode {
        /// `in0 + in1`.
        Add = sys::CUDNNFE_POINTWISE_ADD,
        /// `in0 + in1 * in1`.
        AddSquare = sys::CUDNNFE_POINTWISE_ADD_SQUARE,
        /// `in0 - in1`.
        Sub = sys::CUDNNFE_POINTWISE_SUB,
        /// `in0 * in1`.
        Mul = sys::CUDNNFE_POINTWISE_MUL,
        /// `in0 / in1`.
        Div = sys::CUDNNFE_POINTWISE_DIV,
        /// `max(in0, in1)`.
        Max = sys::CUDNNFE_POINTWISE_MAX,
        /// `min(in0, in1)`.
        Min = sys::CUDNNFE_POINTWISE_MIN,
        /// `in0 mod in1`.
        Mod = sys::CUDNNFE_POINTWISE_MOD,
        /// `in0 ^ in1`.
        Pow = sys::CUDNNFE_POINTWISE_POW,
        /// `atan2(in0, in1)`.
        Atan2 = sys::CUDNNFE_POINTWISE_ATAN2,
        /// `-in0`.
        Neg = sys::CUDNNFE_POINTWISE_NEG,
        /// `|in0|`.
        Abs = sys::CUDNNFE_POINTWISE_ABS,
        /// `ceil(in0)`.
        Ceil = sys::CUDNNFE_POINTWISE_CEIL,
        /// `floor(in0)`.
        Floor = sys::CUDNNFE_POINTWISE_FLOOR,
        /// `1 / in0`.
        Reciprocal = sys::CUDNNFE_POINTWISE_RECIPROCAL,
        /// `sqrt(in0)`.
        Sqrt = sys::CUDNNFE_POINTWISE_SQRT,
        /// `1 / sqrt(in0)`.
        Rsqrt = sys::CUDNNFE_POINTWISE_RSQRT,
        /// `exp(in0)`.
        Exp = sys::CUDNNFE_POINTWISE_EXP,
        /// `ln(in0)`.
        Log = sys::CUDNNFE_POINTWISE_LOG,
        /// `sin(in0)`.
        Sin = sys::CUDNNFE_POINTWISE_SIN,
        /// `cos(in0)`.
        Cos = sys::CUDNNFE_POINTWISE_COS,
        /// `tan(in0)`.
        Tan = sys::CUDNNFE_POINTWISE_TAN,
        /// `erf(in0)`.
        Erf = sys::CUDNNFE_POINTWISE_ERF,
        /// `in0` (a copy or a type conversion).
        Identity = sys::CUDNNFE_POINTWISE_IDENTITY,
        /// ReLU with the options' clips and slope.
        ReluFwd = sys::CUDNNFE_POINTWISE_RELU_FWD,
        /// `tanh(in0)`.
        TanhFwd = sys::CUDNNFE_POINTWISE_TANH_FWD,
        /// Logistic sigmoid.
        SigmoidFwd = sys::CUDNNFE_POINTWISE_SIGMOID_FWD,
        /// ELU with the options' `elu_alpha`.
        EluFwd = sys::CUDNNFE_POINTWISE_ELU_FWD,
        /// GELU (erf form).
        GeluFwd = sys::CUDNNFE_POINTWISE_GELU_FWD,
        /// GELU, tanh approximation.
        GeluApproxTanhFwd = sys::CUDNNFE_POINTWISE_GELU_APPROX_TANH_FWD,
        /// Softplus with the options' `softplus_beta`.
        SoftplusFwd = sys::CUDNNFE_POINTWISE_SOFTPLUS_FWD,
        /// Swish with the options' `swish_beta`.
        SwishFwd = sys::CUDNNFE_POINTWISE_SWISH_FWD,
        /// Gradient of ReLU: `in0 = dy`, `in1 = x`.
        ReluBwd = sys::CUDNNFE_POINTWISE_RELU_BWD,
        /// Gradient of tanh.
        TanhBwd = sys::CUDNNFE_POINTWISE_TANH_BWD,
        /// Gradient of the sigmoid.
        SigmoidBwd = sys::CUDNNFE_POINTWISE_SIGMOID_BWD,
        /// Gradient of ELU.
        EluBwd = sys::CUDNNFE_POINTWISE_ELU_BWD,
        /// Gradient of GELU.
        GeluBwd = sys::CUDNNFE_POINTWISE_GELU_BWD,
        /// Gradient of the tanh-approximated GELU.
        GeluApproxTanhBwd = sys::CUDNNFE_POINTWISE_GELU_APPROX_TANH_BWD,
        /// Gradient of softplus.
        SoftplusBwd = sys::CUDNNFE_POINTWISE_SOFTPLUS_BWD,
        /// Gradient of swish.
        SwishBwd = sys::CUDNNFE_POINTWISE_SWISH_BWD,
        /// `in0 == in1` (BOOLEAN).
        CmpEq = sys::CUDNNFE_POINTWISE_CMP_EQ,
        /// `in0 != in1` (BOOLEAN).
        CmpNeq = sys::CUDNNFE_POINTWISE_CMP_NEQ,
        /// `in0 > in1` (BOOLEAN).
        CmpGt = sys::CUDNNFE_POINTWISE_CMP_GT,
        /// `in0 >= in1` (BOOLEAN).
        CmpGe = sys::CUDNNFE_POINTWISE_CMP_GE,
        /// `in0 < in1` (BOOLEAN).
        CmpLt = sys::CUDNNFE_POINTWISE_CMP_LT,
        /// `in0 <= in1` (BOOLEAN).
        CmpLe = sys::CUDNNFE_POINTWISE_CMP_LE,
        /// `in0 && in1` (BOOLEAN).
        LogicalAnd = sys::CUDNNFE_POINTWISE_LOGICAL_AND,
        /// `in0 || in1` (BOOLEAN).
        LogicalOr = sys::CUDNNFE_POINTWISE_LOGICAL_OR,
        /// `!in0` (BOOLEAN).
        LogicalNot = sys::CUDNNFE_POINTWISE_LOGICAL_NOT,
        /// `in2 ? in0 : in1`.
        BinarySelect = sys::CUDNNFE_POINTWISE_BINARY_SELECT,
        /// Index of each element along the options' `axis` (INT32).
        GenIndex = sys::CUDNNFE_POINTWISE_GEN_INDEX,
    }
}

int_enum! {
    /// Reduction operation (`cudnnfe_reduction_mode_t`).
    pub enum ReductionMode {
        /// Sum.
        Add = sys::CUDNNFE_REDUCTION_ADD,
        /// Product.
        Mul = sys::CUDNNFE_REDUCTION_MUL,
        /// Minimum.
        Min = sys::CUDNNFE_REDUCTION_MIN,
        /// Maximum.
        Max = sys::CUDNNFE_REDUCTION_MAX,
        /// Maximum of absolute values.
        Amax = sys::CUDNNFE_REDUCTION_AMAX,
        /// Mean.
        Avg = sys::CUDNNFE_REDUCTION_AVG,
        /// Sum of absolute values.
        Norm1 = sys::CUDNNFE_REDUCTION_NORM1,
        /// Euclidean norm.
        Norm2 = sys::CUDNNFE_REDUCTION_NORM2,
        /// Product of the non-zero elements.
        MulNoZeros = sys::CUDNNFE_REDUCTION_MUL_NO_ZEROS,
    }
}

/// A tensor of a graph, by its UID (a plain 64-bit id, like in the C ABI).
///
/// `Tensor` is `Copy` and not tied to the graph's lifetime: the same UID
/// appears in the serialized graph and at execute time. Methods given a UID
/// their graph does not have return [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(transparent)]
pub struct Tensor(i64);

impl Tensor {
    /// The tensor with UID `uid` (e.g. one read from a serialized graph).
    pub const fn from_uid(uid: i64) -> Tensor {
        Tensor(uid)
    }

    /// The UID.
    pub const fn uid(self) -> i64 {
        self.0
    }

    /// The tensor with UID `uid`; `None` for 0 (an output not made).
    pub(crate) fn from_optional_uid(uid: i64) -> Option<Tensor> {
        (uid != 0).then_some(Tensor(uid))
    }
}

impl fmt::Display for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tensor #{}", self.0)
    }
}

/// Dims and strides (in elements) of a tensor, in logical dimension order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Shape {
    /// Size of each dimension.
    pub dims: Vec<i64>,
    /// Distance in elements between neighbours along each dimension.
    pub strides: Vec<i64>,
}

impl Shape {
    /// Number of logical elements (product of the dims).
    pub fn element_count(&self) -> usize {
        self.dims.iter().map(|&d| d.max(0) as usize).product()
    }

    /// Number of elements of memory the tensor spans: the largest offset
    /// plus one (less than `element_count` for broadcast stride-0 dims, more
    /// for padded layouts). A host buffer for the tensor holds exactly this
    /// many elements.
    pub fn element_span(&self) -> usize {
        if self.dims.iter().any(|&d| d <= 0) {
            return 0;
        }
        1 + self
            .dims
            .iter()
            .zip(&self.strides)
            .map(|(&d, &s)| (d as usize - 1) * s.max(0) as usize)
            .sum::<usize>()
    }
}

int_enum! {
    /// Whether a normalization writes its statistics (`cudnnfe_norm_phase_t`).
    pub enum NormPhase {
        /// Training: also writes the statistics (mean, inverse variance or
        /// inverse RMS) for the backward pass (the default).
        Training = sys::CUDNNFE_NORM_PHASE_TRAINING,
        /// Inference: only `y`.
        Inference = sys::CUDNNFE_NORM_PHASE_INFERENCE,
    }
}

int_enum! {
    /// How many of the heuristics' engine configurations a GPU build turns
    /// into plans (`cudnnfe_build_policy_t`).
    pub enum BuildPolicy {
        /// The first configuration, in heuristics order, that passes the
        /// filters and builds: one plan, the quickest build (the default).
        HeuristicsChoice = sys::CUDNNFE_BUILD_POLICY_HEURISTICS_CHOICE,
        /// Every configuration that passes the filters and builds, in
        /// heuristics order (plan 0 is the heuristics' choice), for
        /// [`BuiltGraph::select_plan`](crate::BuiltGraph::select_plan) and
        /// [`BuiltGraph::autotune`](crate::BuiltGraph::autotune).
        All = sys::CUDNNFE_BUILD_POLICY_ALL,
    }
}

impl Default for BuildPolicy {
    /// [`BuildPolicy::HeuristicsChoice`].
    fn default() -> Self {
        BuildPolicy::HeuristicsChoice
    }
}

int_enum! {
    /// Whether a build's plans check their first execute against the CPU
    /// reference on a sample of output elements (`cudnnfe_verify_mode_t`,
    /// `docs/verify.md`; since 0.4).
    pub enum VerifyMode {
        /// On when the environment variable `CUDNNFE_VERIFY` is `1` at build
        /// (the default).
        FromEnv = sys::CUDNNFE_VERIFY_FROM_ENV,
        /// On, whatever the environment says.
        On = sys::CUDNNFE_VERIFY_ON,
        /// Off, whatever the environment says.
        Off = sys::CUDNNFE_VERIFY_OFF,
    }
}

impl Default for VerifyMode {
    /// [`VerifyMode::FromEnv`].
    fn default() -> Self {
        VerifyMode::FromEnv
    }
}

int_enum! {
    /// Where a built graph's plan came from (`cudnnfe_plan_source_t`), in
    /// [`BuildInfo::source`](crate::BuildInfo::source).
    pub enum PlanSource {
        /// Heuristics and plan build; every CPU reference build.
        Built = sys::CUDNNFE_PLAN_SOURCE_BUILT,
        /// Reused from this process's plan cache.
        MemoryCache = sys::CUDNNFE_PLAN_SOURCE_MEMORY_CACHE,
        /// Loaded from the plan cache directory.
        DiskCache = sys::CUDNNFE_PLAN_SOURCE_DISK_CACHE,
        /// Built from a plan blob's engine configuration
        /// ([`BuiltGraph::from_plan`](crate::BuiltGraph::from_plan)).
        Serialized = sys::CUDNNFE_PLAN_SOURCE_SERIALIZED,
        /// A plan blob that did not fit this machine, built again from its
        /// graph description ([`PlanLoadOptions::rebuild_on_mismatch`](crate::PlanLoadOptions::rebuild_on_mismatch)).
        Rebuilt = sys::CUDNNFE_PLAN_SOURCE_REBUILT,
    }
}

int_enum! {
    /// Where the diagonal of attention's diagonal band (sliding window)
    /// starts (`cudnnfe_diagonal_alignment_t`), in
    /// [`SdpaOptions::diagonal_alignment`](crate::SdpaOptions::diagonal_alignment).
    pub enum DiagonalAlignment {
        /// Row `i`'s diagonal is column `i` (the default).
        TopLeft = sys::CUDNNFE_DIAGONAL_TOP_LEFT,
        /// Row `i`'s diagonal is column `i + s_kv - s_q` (with padding,
        /// `i + seq_len_kv[n] - seq_len_q[n]`).
        BottomRight = sys::CUDNNFE_DIAGONAL_BOTTOM_RIGHT,
    }
}

impl Default for DiagonalAlignment {
    /// [`DiagonalAlignment::TopLeft`].
    fn default() -> Self {
        DiagonalAlignment::TopLeft
    }
}

int_enum! {
    /// How cuDNN runs an attention forward (`cudnnfe_attention_implementation_t`,
    /// cudnn-frontend's `attention_implementation`), in
    /// [`SdpaOptions::implementation`](crate::SdpaOptions::implementation).
    pub enum AttentionImplementation {
        /// The unified operation where the loaded cuDNN runs the node's
        /// options through it, else the composite graph (the default).
        Auto = sys::CUDNNFE_ATTENTION_IMPLEMENTATION_AUTO,
        /// The composite graph of matmuls, pointwise ops and reductions.
        Composite = sys::CUDNNFE_ATTENTION_IMPLEMENTATION_COMPOSITE,
        /// The single SDPA_FWD operation (cuDNN 9.13.1 and newer).
        Unified = sys::CUDNNFE_ATTENTION_IMPLEMENTATION_UNIFIED,
    }
}

impl Default for AttentionImplementation {
    /// [`AttentionImplementation::Auto`].
    fn default() -> Self {
        AttentionImplementation::Auto
    }
}

int_enum! {
    /// Pooling or upsampling mode of [`Graph::resample`](crate::Graph::resample)
    /// (`cudnnfe_resample_mode_t`).
    pub enum ResampleMode {
        /// Maximum over each window (the default).
        MaxPool = sys::CUDNNFE_RESAMPLE_MAXPOOL,
        /// Average over each window, dividing by the window size.
        AvgPoolIncludePadding = sys::CUDNNFE_RESAMPLE_AVGPOOL_INCLUDE_PADDING,
        /// Average over each window, dividing by the in-image count.
        AvgPoolExcludePadding = sys::CUDNNFE_RESAMPLE_AVGPOOL_EXCLUDE_PADDING,
        /// Upsampling by an integer factor: nearest neighbour.
        Nearest = sys::CUDNNFE_RESAMPLE_NEAREST,
        /// Upsampling by an integer factor: bilinear (edges clamp).
        Bilinear = sys::CUDNNFE_RESAMPLE_BILINEAR,
    }
}

int_enum! {
    /// What pooling reads outside the image (`cudnnfe_padding_mode_t`).
    pub enum PaddingMode {
        /// `NegInf` for max pooling, `Zero` for average pooling (the default).
        Auto = sys::CUDNNFE_PADDING_AUTO,
        /// Zeros.
        Zero = sys::CUDNNFE_PADDING_ZERO,
        /// Minus infinity (max pooling only).
        NegInf = sys::CUDNNFE_PADDING_NEG_INF,
        /// The nearest edge value (max pooling only).
        Edge = sys::CUDNNFE_PADDING_EDGE,
    }
}

int_enum! {
    /// Distribution of [`Graph::rng`](crate::Graph::rng)
    /// (`cudnnfe_rng_distribution_t`).
    pub enum RngDistribution {
        /// 1 with the options' `bernoulli_probability`, else 0 (the default).
        Bernoulli = sys::CUDNNFE_RNG_BERNOULLI,
        /// Uniform on `[uniform_min, uniform_max)`.
        Uniform = sys::CUDNNFE_RNG_UNIFORM,
        /// Normal with `normal_mean` and `normal_stddev`.
        Normal = sys::CUDNNFE_RNG_NORMAL,
    }
}

int_enum! {
    /// How routed rows relate to token and output rows in
    /// [`Graph::moe_grouped_matmul`](crate::Graph::moe_grouped_matmul)
    /// (`cudnnfe_moe_grouped_matmul_mode_t`; docs/moe.md).
    pub enum MoeGroupedMatmulMode {
        /// `output[r] = token[r] @ weight[expert(r)]` (the default; the only
        /// mode of the backward).
        None = sys::CUDNNFE_MOE_GROUPED_MATMUL_MODE_NONE,
        /// `output[r] = token[token_index[r]] @ weight[expert(r)]`.
        Gather = sys::CUDNNFE_MOE_GROUPED_MATMUL_MODE_GATHER,
        /// `output[token_index[r] * top_k + token_ks[r]] = token[r] @ weight[expert(r)]`.
        Scatter = sys::CUDNNFE_MOE_GROUPED_MATMUL_MODE_SCATTER,
    }
}
