package cudnnfe

import (
	"strconv"

	"github.com/cudnnfe/cudnnfe/bindings/go/internal/capi"
)

// DType is a tensor data type (cudnnfe_dtype_t).
type DType int32

// Data types (CUDNNFE_DTYPE_*).
const (
	DTypeNotSet   DType = DType(capi.CUDNNFE_DTYPE_NOT_SET) // resolved from the graph's defaults
	DTypeFloat    DType = DType(capi.CUDNNFE_DTYPE_FLOAT)
	DTypeHalf     DType = DType(capi.CUDNNFE_DTYPE_HALF)
	DTypeBFloat16 DType = DType(capi.CUDNNFE_DTYPE_BFLOAT16)
	DTypeFP8E4M3  DType = DType(capi.CUDNNFE_DTYPE_FP8_E4M3)
	DTypeFP8E5M2  DType = DType(capi.CUDNNFE_DTYPE_FP8_E5M2)
	DTypeInt8     DType = DType(capi.CUDNNFE_DTYPE_INT8)
	DTypeInt32    DType = DType(capi.CUDNNFE_DTYPE_INT32)
	DTypeInt64    DType = DType(capi.CUDNNFE_DTYPE_INT64)
	DTypeBoolean  DType = DType(capi.CUDNNFE_DTYPE_BOOLEAN) // one byte per element, 0 or 1
	DTypeUint8    DType = DType(capi.CUDNNFE_DTYPE_UINT8)
	DTypeDouble   DType = DType(capi.CUDNNFE_DTYPE_DOUBLE)
	DTypeFP8E8M0  DType = DType(capi.CUDNNFE_DTYPE_FP8_E8M0) // block scales: 2^(byte-127)
	// DTypeBooleanPacked: booleans bit-packed as cuDNN stores them (element
	// offset o is bit o%8, least significant first, of byte o/8).
	DTypeBooleanPacked DType = DType(capi.CUDNNFE_DTYPE_BOOLEAN_PACKED)
)

// String returns the library's name of the type ("BFLOAT16"; "UNKNOWN").
func (d DType) String() string { return capi.Cudnnfe_dtype_name(int32(d)) }

// Size returns the size in bytes of one element; 0 for DTypeNotSet or an
// unknown type.
func (d DType) Size() int { return int(capi.Cudnnfe_dtype_size(int32(d))) }

// Target says where a built graph runs (cudnnfe_target_t).
type Target int32

// Targets (CUDNNFE_TARGET_*).
const (
	TargetAuto         Target = Target(capi.CUDNNFE_TARGET_AUTO)          // GPU when cuDNN and a GPU load, else CPU
	TargetGPU          Target = Target(capi.CUDNNFE_TARGET_GPU)           // cuDNN on the GPU; fails if unavailable
	TargetCPUReference Target = Target(capi.CUDNNFE_TARGET_CPU_REFERENCE) // plain loops on host buffers
)

func (t Target) String() string {
	switch t {
	case TargetAuto:
		return "AUTO"
	case TargetGPU:
		return "GPU"
	case TargetCPUReference:
		return "CPU_REFERENCE"
	}
	return "Target(" + strconv.Itoa(int(t)) + ")"
}

// HeurMode is a cuDNN heuristic mode (cudnnfe_heur_mode_t).
type HeurMode int32

// Heuristic modes (CUDNNFE_HEUR_MODE_*).
const (
	HeurModeA        HeurMode = HeurMode(capi.CUDNNFE_HEUR_MODE_A)
	HeurModeB        HeurMode = HeurMode(capi.CUDNNFE_HEUR_MODE_B)
	HeurModeFallback HeurMode = HeurMode(capi.CUDNNFE_HEUR_MODE_FALLBACK)
)

func (m HeurMode) String() string {
	switch m {
	case HeurModeA:
		return "A"
	case HeurModeB:
		return "B"
	case HeurModeFallback:
		return "FALLBACK"
	}
	return "HeurMode(" + strconv.Itoa(int(m)) + ")"
}

// ConvMode is a convolution's mode (cudnnfe_conv_mode_t).
type ConvMode int32

// Convolution modes (CUDNNFE_CONV_MODE_*).
const (
	ConvModeCrossCorrelation ConvMode = ConvMode(capi.CUDNNFE_CONV_MODE_CROSS_CORRELATION)
	ConvModeConvolution      ConvMode = ConvMode(capi.CUDNNFE_CONV_MODE_CONVOLUTION)
)

func (m ConvMode) String() string {
	switch m {
	case ConvModeCrossCorrelation:
		return "CROSS_CORRELATION"
	case ConvModeConvolution:
		return "CONVOLUTION"
	}
	return "ConvMode(" + strconv.Itoa(int(m)) + ")"
}

// ReductionMode is a reduction's mode (cudnnfe_reduction_mode_t).
type ReductionMode int32

// Reduction modes (CUDNNFE_REDUCTION_*).
const (
	ReductionAdd        ReductionMode = ReductionMode(capi.CUDNNFE_REDUCTION_ADD)
	ReductionMul        ReductionMode = ReductionMode(capi.CUDNNFE_REDUCTION_MUL)
	ReductionMin        ReductionMode = ReductionMode(capi.CUDNNFE_REDUCTION_MIN)
	ReductionMax        ReductionMode = ReductionMode(capi.CUDNNFE_REDUCTION_MAX)
	ReductionAmax       ReductionMode = ReductionMode(capi.CUDNNFE_REDUCTION_AMAX) // max of absolute values
	ReductionAvg        ReductionMode = ReductionMode(capi.CUDNNFE_REDUCTION_AVG)
	ReductionNorm1      ReductionMode = ReductionMode(capi.CUDNNFE_REDUCTION_NORM1)
	ReductionNorm2      ReductionMode = ReductionMode(capi.CUDNNFE_REDUCTION_NORM2)
	ReductionMulNoZeros ReductionMode = ReductionMode(capi.CUDNNFE_REDUCTION_MUL_NO_ZEROS)
)

var reductionNames = map[ReductionMode]string{
	ReductionAdd: "ADD", ReductionMul: "MUL", ReductionMin: "MIN", ReductionMax: "MAX",
	ReductionAmax: "AMAX", ReductionAvg: "AVG", ReductionNorm1: "NORM1", ReductionNorm2: "NORM2",
	ReductionMulNoZeros: "MUL_NO_ZEROS",
}

func (m ReductionMode) String() string {
	if s, ok := reductionNames[m]; ok {
		return s
	}
	return "ReductionMode(" + strconv.Itoa(int(m)) + ")"
}

// PointwiseMode is an elementwise operation (cudnnfe_pointwise_mode_t).
// Operands: unary modes read in0; binary modes compute in0 <op> in1; *Bwd
// modes read in0 = dy (the loss) and in1 = x (the forward input) and write
// dx; PointwiseBinarySelect writes in2 ? in0 : in1; PointwiseGenIndex writes
// each element's index along PointwiseOptions.Axis of in0's shape (INT32).
type PointwiseMode int32

// Pointwise modes (CUDNNFE_POINTWISE_*).
const (
	PointwiseAdd               PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_ADD)
	PointwiseAddSquare         PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_ADD_SQUARE) // in0 + in1*in1
	PointwiseSub               PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_SUB)
	PointwiseMul               PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_MUL)
	PointwiseDiv               PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_DIV)
	PointwiseMax               PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_MAX)
	PointwiseMin               PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_MIN)
	PointwiseMod               PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_MOD)
	PointwisePow               PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_POW)
	PointwiseAtan2             PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_ATAN2)
	PointwiseNeg               PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_NEG)
	PointwiseAbs               PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_ABS)
	PointwiseCeil              PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_CEIL)
	PointwiseFloor             PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_FLOOR)
	PointwiseReciprocal        PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_RECIPROCAL)
	PointwiseSqrt              PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_SQRT)
	PointwiseRsqrt             PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_RSQRT)
	PointwiseExp               PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_EXP)
	PointwiseLog               PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_LOG)
	PointwiseSin               PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_SIN)
	PointwiseCos               PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_COS)
	PointwiseTan               PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_TAN)
	PointwiseErf               PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_ERF)
	PointwiseIdentity          PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_IDENTITY)
	PointwiseReluFwd           PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_RELU_FWD)
	PointwiseTanhFwd           PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_TANH_FWD)
	PointwiseSigmoidFwd        PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_SIGMOID_FWD)
	PointwiseEluFwd            PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_ELU_FWD)
	PointwiseGeluFwd           PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_GELU_FWD)
	PointwiseGeluApproxTanhFwd PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_GELU_APPROX_TANH_FWD)
	PointwiseSoftplusFwd       PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_SOFTPLUS_FWD)
	PointwiseSwishFwd          PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_SWISH_FWD)
	PointwiseReluBwd           PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_RELU_BWD)
	PointwiseTanhBwd           PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_TANH_BWD)
	PointwiseSigmoidBwd        PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_SIGMOID_BWD)
	PointwiseEluBwd            PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_ELU_BWD)
	PointwiseGeluBwd           PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_GELU_BWD)
	PointwiseGeluApproxTanhBwd PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_GELU_APPROX_TANH_BWD)
	PointwiseSoftplusBwd       PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_SOFTPLUS_BWD)
	PointwiseSwishBwd          PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_SWISH_BWD)
	PointwiseCmpEq             PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_CMP_EQ)
	PointwiseCmpNeq            PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_CMP_NEQ)
	PointwiseCmpGt             PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_CMP_GT)
	PointwiseCmpGe             PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_CMP_GE)
	PointwiseCmpLt             PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_CMP_LT)
	PointwiseCmpLe             PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_CMP_LE)
	PointwiseLogicalAnd        PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_LOGICAL_AND)
	PointwiseLogicalOr         PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_LOGICAL_OR)
	PointwiseLogicalNot        PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_LOGICAL_NOT)
	PointwiseBinarySelect      PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_BINARY_SELECT)
	PointwiseGenIndex          PointwiseMode = PointwiseMode(capi.CUDNNFE_POINTWISE_GEN_INDEX)
)

var pointwiseNames = map[PointwiseMode]string{
	PointwiseAdd: "ADD", PointwiseAddSquare: "ADD_SQUARE", PointwiseSub: "SUB", PointwiseMul: "MUL",
	PointwiseDiv: "DIV", PointwiseMax: "MAX", PointwiseMin: "MIN", PointwiseMod: "MOD",
	PointwisePow: "POW", PointwiseAtan2: "ATAN2", PointwiseNeg: "NEG", PointwiseAbs: "ABS",
	PointwiseCeil: "CEIL", PointwiseFloor: "FLOOR", PointwiseReciprocal: "RECIPROCAL",
	PointwiseSqrt: "SQRT", PointwiseRsqrt: "RSQRT", PointwiseExp: "EXP", PointwiseLog: "LOG",
	PointwiseSin: "SIN", PointwiseCos: "COS", PointwiseTan: "TAN", PointwiseErf: "ERF",
	PointwiseIdentity: "IDENTITY", PointwiseReluFwd: "RELU_FWD", PointwiseTanhFwd: "TANH_FWD",
	PointwiseSigmoidFwd: "SIGMOID_FWD", PointwiseEluFwd: "ELU_FWD", PointwiseGeluFwd: "GELU_FWD",
	PointwiseGeluApproxTanhFwd: "GELU_APPROX_TANH_FWD", PointwiseSoftplusFwd: "SOFTPLUS_FWD",
	PointwiseSwishFwd: "SWISH_FWD", PointwiseReluBwd: "RELU_BWD", PointwiseTanhBwd: "TANH_BWD",
	PointwiseSigmoidBwd: "SIGMOID_BWD", PointwiseEluBwd: "ELU_BWD", PointwiseGeluBwd: "GELU_BWD",
	PointwiseGeluApproxTanhBwd: "GELU_APPROX_TANH_BWD", PointwiseSoftplusBwd: "SOFTPLUS_BWD",
	PointwiseSwishBwd: "SWISH_BWD", PointwiseCmpEq: "CMP_EQ", PointwiseCmpNeq: "CMP_NEQ",
	PointwiseCmpGt: "CMP_GT", PointwiseCmpGe: "CMP_GE", PointwiseCmpLt: "CMP_LT",
	PointwiseCmpLe: "CMP_LE", PointwiseLogicalAnd: "LOGICAL_AND", PointwiseLogicalOr: "LOGICAL_OR",
	PointwiseLogicalNot: "LOGICAL_NOT", PointwiseBinarySelect: "BINARY_SELECT",
	PointwiseGenIndex: "GEN_INDEX",
}

// String returns the mode's C name without its prefix ("RELU_FWD").
func (m PointwiseMode) String() string {
	if s, ok := pointwiseNames[m]; ok {
		return s
	}
	return "PointwiseMode(" + strconv.Itoa(int(m)) + ")"
}

// TensorKind is what a tensor is to its graph (cudnnfe_tensor_kind_t).
type TensorKind int32

// Tensor kinds (CUDNNFE_TENSOR_KIND_*).
const (
	TensorKindInput   TensorKind = TensorKind(capi.CUDNNFE_TENSOR_KIND_INPUT)   // graph input, read at execute
	TensorKindScalar  TensorKind = TensorKind(capi.CUDNNFE_TENSOR_KIND_SCALAR)  // pass-by-value constant, no binding
	TensorKindVirtual TensorKind = TensorKind(capi.CUDNNFE_TENSOR_KIND_VIRTUAL) // op output kept inside the plan
	TensorKindOutput  TensorKind = TensorKind(capi.CUDNNFE_TENSOR_KIND_OUTPUT)  // op output written at execute
)

func (k TensorKind) String() string {
	switch k {
	case TensorKindInput:
		return "INPUT"
	case TensorKindScalar:
		return "SCALAR"
	case TensorKindVirtual:
		return "VIRTUAL"
	case TensorKindOutput:
		return "OUTPUT"
	}
	return "TensorKind(" + strconv.Itoa(int(k)) + ")"
}

// MaxDims is the most dimensions a tensor may have (CUDNNFE_MAX_DIMS).
const MaxDims = capi.CUDNNFE_MAX_DIMS

// MaxSpatialDims is the most spatial dimensions of a convolution
// (CUDNNFE_MAX_SPATIAL_DIMS).
const MaxSpatialDims = capi.CUDNNFE_MAX_SPATIAL_DIMS

// AttentionImplementation says how cuDNN runs an attention forward
// (cudnnfe_attention_implementation_t, cudnn-frontend's
// attention_implementation). Since 0.3.
type AttentionImplementation int32

// Attention implementations (CUDNNFE_ATTENTION_IMPLEMENTATION_*).
const (
	AttentionAuto      AttentionImplementation = AttentionImplementation(capi.CUDNNFE_ATTENTION_IMPLEMENTATION_AUTO)      // unified where it runs, else composite
	AttentionComposite AttentionImplementation = AttentionImplementation(capi.CUDNNFE_ATTENTION_IMPLEMENTATION_COMPOSITE) // the composite graph
	AttentionUnified   AttentionImplementation = AttentionImplementation(capi.CUDNNFE_ATTENTION_IMPLEMENTATION_UNIFIED)   // the SDPA_FWD operation
)

// DiagonalAlignment says where the diagonal of attention's diagonal band
// (sliding window) starts (cudnnfe_diagonal_alignment_t).
type DiagonalAlignment int32

// Diagonal alignments (CUDNNFE_DIAGONAL_*).
const (
	DiagonalTopLeft     DiagonalAlignment = DiagonalAlignment(capi.CUDNNFE_DIAGONAL_TOP_LEFT)     // row i's diagonal is column i
	DiagonalBottomRight DiagonalAlignment = DiagonalAlignment(capi.CUDNNFE_DIAGONAL_BOTTOM_RIGHT) // column i + s_kv - s_q
)

func (a DiagonalAlignment) String() string {
	switch a {
	case DiagonalTopLeft:
		return "TOP_LEFT"
	case DiagonalBottomRight:
		return "BOTTOM_RIGHT"
	}
	return "DiagonalAlignment(" + strconv.Itoa(int(a)) + ")"
}

// ResampleMode is a pooling or upsampling mode (cudnnfe_resample_mode_t).
type ResampleMode int32

// Resampling modes (CUDNNFE_RESAMPLE_*).
const (
	ResampleMaxPool               ResampleMode = ResampleMode(capi.CUDNNFE_RESAMPLE_MAXPOOL)
	ResampleAvgPoolIncludePadding ResampleMode = ResampleMode(capi.CUDNNFE_RESAMPLE_AVGPOOL_INCLUDE_PADDING) // divides by the window size
	ResampleAvgPoolExcludePadding ResampleMode = ResampleMode(capi.CUDNNFE_RESAMPLE_AVGPOOL_EXCLUDE_PADDING) // divides by the in-image count
	ResampleNearest               ResampleMode = ResampleMode(capi.CUDNNFE_RESAMPLE_NEAREST)                 // upsampling
	ResampleBilinear              ResampleMode = ResampleMode(capi.CUDNNFE_RESAMPLE_BILINEAR)                // upsampling, edges clamp
)

func (m ResampleMode) String() string {
	switch m {
	case ResampleMaxPool:
		return "MAXPOOL"
	case ResampleAvgPoolIncludePadding:
		return "AVGPOOL_INCLUDE_PADDING"
	case ResampleAvgPoolExcludePadding:
		return "AVGPOOL_EXCLUDE_PADDING"
	case ResampleNearest:
		return "NEAREST"
	case ResampleBilinear:
		return "BILINEAR"
	}
	return "ResampleMode(" + strconv.Itoa(int(m)) + ")"
}

// PaddingMode is what pooling reads outside the image
// (cudnnfe_padding_mode_t).
type PaddingMode int32

// Padding modes (CUDNNFE_PADDING_*).
const (
	PaddingAuto   PaddingMode = PaddingMode(capi.CUDNNFE_PADDING_AUTO)    // NEG_INF for max pooling, ZERO for average pooling
	PaddingZero   PaddingMode = PaddingMode(capi.CUDNNFE_PADDING_ZERO)    // zeros
	PaddingNegInf PaddingMode = PaddingMode(capi.CUDNNFE_PADDING_NEG_INF) // -infinity (max pooling only)
	PaddingEdge   PaddingMode = PaddingMode(capi.CUDNNFE_PADDING_EDGE)    // the nearest edge value (max pooling only)
)

func (m PaddingMode) String() string {
	switch m {
	case PaddingAuto:
		return "AUTO"
	case PaddingZero:
		return "ZERO"
	case PaddingNegInf:
		return "NEG_INF"
	case PaddingEdge:
		return "EDGE"
	}
	return "PaddingMode(" + strconv.Itoa(int(m)) + ")"
}

// RNGDistribution is the distribution of Graph.RNG
// (cudnnfe_rng_distribution_t).
type RNGDistribution int32

// Distributions (CUDNNFE_RNG_*).
const (
	RNGBernoulli RNGDistribution = RNGDistribution(capi.CUDNNFE_RNG_BERNOULLI) // 1 with BernoulliProbability, else 0
	RNGUniform   RNGDistribution = RNGDistribution(capi.CUDNNFE_RNG_UNIFORM)   // uniform on [UniformMin, UniformMax)
	RNGNormal    RNGDistribution = RNGDistribution(capi.CUDNNFE_RNG_NORMAL)    // normal(NormalMean, NormalStddev)
)

func (d RNGDistribution) String() string {
	switch d {
	case RNGBernoulli:
		return "BERNOULLI"
	case RNGUniform:
		return "UNIFORM"
	case RNGNormal:
		return "NORMAL"
	}
	return "RNGDistribution(" + strconv.Itoa(int(d)) + ")"
}

// MoeGroupedMatmulMode says how routed rows relate to token and output rows
// in MoeGroupedMatmul (cudnnfe_moe_grouped_matmul_mode_t; docs/moe.md).
type MoeGroupedMatmulMode int32

// MoE routing modes (CUDNNFE_MOE_GROUPED_MATMUL_MODE_*); r is a routed row.
const (
	MoeModeNone    MoeGroupedMatmulMode = MoeGroupedMatmulMode(capi.CUDNNFE_MOE_GROUPED_MATMUL_MODE_NONE)    // output[r] = token[r] @ weight[expert(r)]
	MoeModeGather  MoeGroupedMatmulMode = MoeGroupedMatmulMode(capi.CUDNNFE_MOE_GROUPED_MATMUL_MODE_GATHER)  // output[r] = token[token_index[r]] @ ...
	MoeModeScatter MoeGroupedMatmulMode = MoeGroupedMatmulMode(capi.CUDNNFE_MOE_GROUPED_MATMUL_MODE_SCATTER) // output[token_index[r]*TopK + token_ks[r]] = token[r] @ ...
)

func (m MoeGroupedMatmulMode) String() string {
	switch m {
	case MoeModeNone:
		return "NONE"
	case MoeModeGather:
		return "GATHER"
	case MoeModeScatter:
		return "SCATTER"
	}
	return "MoeGroupedMatmulMode(" + strconv.Itoa(int(m)) + ")"
}
