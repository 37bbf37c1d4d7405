"""Enumerations of the C ABI as Python ``IntEnum`` classes.

Names follow NVIDIA cudnn-frontend's Python API (``data_type.HALF``,
``heur_mode.A``); values come from the generated declarations, so they always
equal the C header's ``CUDNNFE_*`` constants.
"""
from __future__ import annotations

from enum import IntEnum, IntFlag

from ._cdef import CONSTANTS as _C

__all__ = ["data_type", "heur_mode", "target", "conv_mode", "pointwise_mode", "reduction_mode",
           "norm_forward_phase", "tensor_kind", "build_plan_policy", "numerical_note",
           "behavior_note", "plan_source", "diagonal_alignment", "resample_mode", "padding_mode",
           "rng_distribution", "convolution_mode", "tensor_reordering", "scalar_type",
           "reshape_mode", "knob_type", "attention_implementation", "moe_grouped_matmul_mode",
           "FE_ONLY_BASE", "FE_ONLY", "is_fe_only"]

#: Members that cudnn-frontend code names but the C ABI has no constant for
#: (``data_type.INT8x4``, ``heur_mode.OPENSOURCE``...) get values from here
#: up, so they can never be mistaken for a C value; passing one to the
#: library raises :class:`NotOfferedError` (``_util._dtype``,
#: ``_graph._heur_modes``).
FE_ONLY_BASE = 1000


class _Enum(IntEnum):
    """An IntEnum that prints as cudnn-frontend's pybind11 enums do: ``str(x)`` is
    ``"diagonal_alignment.TOP_LEFT"`` (an IntEnum prints its number since Python 3.11).
    cudnn-frontend's tests build their test ids from it, so the same tests get the same ids
    with either implementation."""

    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"


class data_type(_Enum):
    """Element type of a tensor, or of an operation's math (``CUDNNFE_DTYPE_*``)."""

    NOT_SET = _C["CUDNNFE_DTYPE_NOT_SET"]
    FLOAT = _C["CUDNNFE_DTYPE_FLOAT"]
    HALF = _C["CUDNNFE_DTYPE_HALF"]
    BFLOAT16 = _C["CUDNNFE_DTYPE_BFLOAT16"]
    FP8_E4M3 = _C["CUDNNFE_DTYPE_FP8_E4M3"]
    FP8_E5M2 = _C["CUDNNFE_DTYPE_FP8_E5M2"]
    INT8 = _C["CUDNNFE_DTYPE_INT8"]
    INT32 = _C["CUDNNFE_DTYPE_INT32"]
    INT64 = _C["CUDNNFE_DTYPE_INT64"]
    BOOLEAN = _C["CUDNNFE_DTYPE_BOOLEAN"]
    UINT8 = _C["CUDNNFE_DTYPE_UINT8"]
    DOUBLE = _C["CUDNNFE_DTYPE_DOUBLE"]
    FP8_E8M0 = _C["CUDNNFE_DTYPE_FP8_E8M0"]
    # cuDNN's bit-packed booleans (8 per byte, least significant bit first): what
    # BOOLEAN set on a tensor becomes, as cuDNN and cudnn-frontend store it (_util._tensor_dtype)
    BOOLEAN_PACKED = _C["CUDNNFE_DTYPE_BOOLEAN_PACKED"]
    # cudnn-frontend's types that the C ABI does not offer (refused when used)
    FAST_FLOAT_FOR_FP8 = FE_ONLY_BASE
    FP4_E2M1 = FE_ONLY_BASE + 1
    INT4 = FE_ONLY_BASE + 2
    INT8x4 = FE_ONLY_BASE + 3
    INT8x32 = FE_ONLY_BASE + 4
    UINT8x4 = FE_ONLY_BASE + 5


class heur_mode(_Enum):
    """Heuristic mode used to pick a cuDNN engine (``CUDNNFE_HEUR_MODE_*``)."""

    A = _C["CUDNNFE_HEUR_MODE_A"]
    B = _C["CUDNNFE_HEUR_MODE_B"]
    FALLBACK = _C["CUDNNFE_HEUR_MODE_FALLBACK"]
    #: cudnn-frontend's own open-source engines: not offered (dropped from a
    #: list of modes that has others, refused alone).
    OPENSOURCE = FE_ONLY_BASE


class target(_Enum):
    """Where a built graph runs (``CUDNNFE_TARGET_*``).

    ``CPU_REFERENCE`` runs plain loops on host memory (NumPy arrays); ``GPU``
    runs cuDNN; ``AUTO`` picks the GPU when cuDNN and a GPU load.
    """

    AUTO = _C["CUDNNFE_TARGET_AUTO"]
    GPU = _C["CUDNNFE_TARGET_GPU"]
    CPU_REFERENCE = _C["CUDNNFE_TARGET_CPU_REFERENCE"]


class conv_mode(_Enum):
    """Convolution or cross-correlation (``CUDNNFE_CONV_MODE_*``)."""

    CROSS_CORRELATION = _C["CUDNNFE_CONV_MODE_CROSS_CORRELATION"]
    CONVOLUTION = _C["CUDNNFE_CONV_MODE_CONVOLUTION"]


class pointwise_mode(_Enum):
    """Elementwise operation (``CUDNNFE_POINTWISE_*``); see the C header for operand roles."""

    ADD = _C["CUDNNFE_POINTWISE_ADD"]
    ADD_SQUARE = _C["CUDNNFE_POINTWISE_ADD_SQUARE"]
    SUB = _C["CUDNNFE_POINTWISE_SUB"]
    MUL = _C["CUDNNFE_POINTWISE_MUL"]
    DIV = _C["CUDNNFE_POINTWISE_DIV"]
    MAX = _C["CUDNNFE_POINTWISE_MAX"]
    MIN = _C["CUDNNFE_POINTWISE_MIN"]
    MOD = _C["CUDNNFE_POINTWISE_MOD"]
    POW = _C["CUDNNFE_POINTWISE_POW"]
    ATAN2 = _C["CUDNNFE_POINTWISE_ATAN2"]
    NEG = _C["CUDNNFE_POINTWISE_NEG"]
    ABS = _C["CUDNNFE_POINTWISE_ABS"]
    CEIL = _C["CUDNNFE_POINTWISE_CEIL"]
    FLOOR = _C["CUDNNFE_POINTWISE_FLOOR"]
    RECIPROCAL = _C["CUDNNFE_POINTWISE_RECIPROCAL"]
    SQRT = _C["CUDNNFE_POINTWISE_SQRT"]
    RSQRT = _C["CUDNNFE_POINTWISE_RSQRT"]
    EXP = _C["CUDNNFE_POINTWISE_EXP"]
    LOG = _C["CUDNNFE_POINTWISE_LOG"]
    SIN = _C["CUDNNFE_POINTWISE_SIN"]
    COS = _C["CUDNNFE_POINTWISE_COS"]
    TAN = _C["CUDNNFE_POINTWISE_TAN"]
    ERF = _C["CUDNNFE_POINTWISE_ERF"]
    IDENTITY = _C["CUDNNFE_POINTWISE_IDENTITY"]
    RELU_FWD = _C["CUDNNFE_POINTWISE_RELU_FWD"]
    TANH_FWD = _C["CUDNNFE_POINTWISE_TANH_FWD"]
    SIGMOID_FWD = _C["CUDNNFE_POINTWISE_SIGMOID_FWD"]
    ELU_FWD = _C["CUDNNFE_POINTWISE_ELU_FWD"]
    GELU_FWD = _C["CUDNNFE_POINTWISE_GELU_FWD"]
    GELU_APPROX_TANH_FWD = _C["CUDNNFE_POINTWISE_GELU_APPROX_TANH_FWD"]
    SOFTPLUS_FWD = _C["CUDNNFE_POINTWISE_SOFTPLUS_FWD"]
    SWISH_FWD = _C["CUDNNFE_POINTWISE_SWISH_FWD"]
    RELU_BWD = _C["CUDNNFE_POINTWISE_RELU_BWD"]
    TANH_BWD = _C["CUDNNFE_POINTWISE_TANH_BWD"]
    SIGMOID_BWD = _C["CUDNNFE_POINTWISE_SIGMOID_BWD"]
    ELU_BWD = _C["CUDNNFE_POINTWISE_ELU_BWD"]
    GELU_BWD = _C["CUDNNFE_POINTWISE_GELU_BWD"]
    GELU_APPROX_TANH_BWD = _C["CUDNNFE_POINTWISE_GELU_APPROX_TANH_BWD"]
    SOFTPLUS_BWD = _C["CUDNNFE_POINTWISE_SOFTPLUS_BWD"]
    SWISH_BWD = _C["CUDNNFE_POINTWISE_SWISH_BWD"]
    CMP_EQ = _C["CUDNNFE_POINTWISE_CMP_EQ"]
    CMP_NEQ = _C["CUDNNFE_POINTWISE_CMP_NEQ"]
    CMP_GT = _C["CUDNNFE_POINTWISE_CMP_GT"]
    CMP_GE = _C["CUDNNFE_POINTWISE_CMP_GE"]
    CMP_LT = _C["CUDNNFE_POINTWISE_CMP_LT"]
    CMP_LE = _C["CUDNNFE_POINTWISE_CMP_LE"]
    LOGICAL_AND = _C["CUDNNFE_POINTWISE_LOGICAL_AND"]
    LOGICAL_OR = _C["CUDNNFE_POINTWISE_LOGICAL_OR"]
    LOGICAL_NOT = _C["CUDNNFE_POINTWISE_LOGICAL_NOT"]
    BINARY_SELECT = _C["CUDNNFE_POINTWISE_BINARY_SELECT"]
    GEN_INDEX = _C["CUDNNFE_POINTWISE_GEN_INDEX"]


class reduction_mode(_Enum):
    """Reduction operation (``CUDNNFE_REDUCTION_*``)."""

    ADD = _C["CUDNNFE_REDUCTION_ADD"]
    MUL = _C["CUDNNFE_REDUCTION_MUL"]
    MIN = _C["CUDNNFE_REDUCTION_MIN"]
    MAX = _C["CUDNNFE_REDUCTION_MAX"]
    AMAX = _C["CUDNNFE_REDUCTION_AMAX"]
    AVG = _C["CUDNNFE_REDUCTION_AVG"]
    NORM1 = _C["CUDNNFE_REDUCTION_NORM1"]
    NORM2 = _C["CUDNNFE_REDUCTION_NORM2"]
    MUL_NO_ZEROS = _C["CUDNNFE_REDUCTION_MUL_NO_ZEROS"]
    NOT_SET = FE_ONLY_BASE  # cudnn-frontend's "no mode": refused


class norm_forward_phase(_Enum):
    """Normalization phase (``CUDNNFE_NORM_PHASE_*``): TRAINING also writes the statistics."""

    TRAINING = _C["CUDNNFE_NORM_PHASE_TRAINING"]
    INFERENCE = _C["CUDNNFE_NORM_PHASE_INFERENCE"]
    NOT_SET = FE_ONLY_BASE  # cudnn-frontend's default: the C default phase (TRAINING)


class tensor_kind(_Enum):
    """What a tensor is to its graph (``CUDNNFE_TENSOR_KIND_*``)."""

    INPUT = _C["CUDNNFE_TENSOR_KIND_INPUT"]
    SCALAR = _C["CUDNNFE_TENSOR_KIND_SCALAR"]
    VIRTUAL = _C["CUDNNFE_TENSOR_KIND_VIRTUAL"]
    OUTPUT = _C["CUDNNFE_TENSOR_KIND_OUTPUT"]


class build_plan_policy(_Enum):
    """How many engine configurations a GPU build turns into plans (``CUDNNFE_BUILD_POLICY_*``).

    ``HEURISTICS_CHOICE``: the first that passes the filters and builds (one
    plan). ``ALL``: every one that passes and builds, in heuristics order
    (plan 0 is the heuristics' choice), for :meth:`pygraph.autotune` and
    :meth:`pygraph.build_plan_at_index`.
    """

    HEURISTICS_CHOICE = _C["CUDNNFE_BUILD_POLICY_HEURISTICS_CHOICE"]
    ALL = _C["CUDNNFE_BUILD_POLICY_ALL"]


class numerical_note(IntFlag):
    """Numerical notes of an engine, as bit flags (``CUDNNFE_NUMERICAL_NOTE_*``).

    Combine with ``|``. On FLOAT data cuDNN reports TF32 math as
    ``TENSOR_CORE``: exclude it to keep full FP32. cudnn-frontend's
    ``WINOGRAD_TILE_4x4`` / ``6x6`` / ``13x13`` are aliases of ``WINOGRAD``
    (the C ABI has one note for every tile size).
    """

    TENSOR_CORE = _C["CUDNNFE_NUMERICAL_NOTE_TENSOR_CORE"]
    DOWN_CONVERT_INPUTS = _C["CUDNNFE_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS"]
    REDUCED_PRECISION_REDUCTION = _C["CUDNNFE_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION"]
    FFT = _C["CUDNNFE_NUMERICAL_NOTE_FFT"]
    NONDETERMINISTIC = _C["CUDNNFE_NUMERICAL_NOTE_NONDETERMINISTIC"]
    WINOGRAD = _C["CUDNNFE_NUMERICAL_NOTE_WINOGRAD"]
    STRICT_NAN_PROP = _C["CUDNNFE_NUMERICAL_NOTE_STRICT_NAN_PROP"]
    ALL = _C["CUDNNFE_NUMERICAL_NOTE_ALL"]
    # cudnn-frontend's names
    WINOGRAD_TILE_4x4 = _C["CUDNNFE_NUMERICAL_NOTE_WINOGRAD"]
    WINOGRAD_TILE_6x6 = _C["CUDNNFE_NUMERICAL_NOTE_WINOGRAD"]
    WINOGRAD_TILE_13x13 = _C["CUDNNFE_NUMERICAL_NOTE_WINOGRAD"]


class behavior_note(IntFlag):
    """Behaviour notes of an engine, as bit flags (``CUDNNFE_BEHAVIOR_NOTE_*``).

    ``RUNTIME_COMPILATION``: compiles a kernel at build (NVRTC).
    ``SUPPORTS_CUDA_GRAPH_NATIVE_API``: the plan can fill a CUDA graph
    (:meth:`pygraph.populate_cuda_graph`). cudnn-frontend's ``..._INT8x32_...``
    spellings are aliases.
    """

    RUNTIME_COMPILATION = _C["CUDNNFE_BEHAVIOR_NOTE_RUNTIME_COMPILATION"]
    REQUIRES_FILTER_INT8X32_REORDER = _C["CUDNNFE_BEHAVIOR_NOTE_REQUIRES_FILTER_INT8X32_REORDER"]
    REQUIRES_BIAS_INT8X32_REORDER = _C["CUDNNFE_BEHAVIOR_NOTE_REQUIRES_BIAS_INT8X32_REORDER"]
    SUPPORTS_CUDA_GRAPH_NATIVE_API = _C["CUDNNFE_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API"]
    CUBLASLT_DEPENDENCY = _C["CUDNNFE_BEHAVIOR_NOTE_CUBLASLT_DEPENDENCY"]
    ALL = _C["CUDNNFE_BEHAVIOR_NOTE_ALL"]
    # cudnn-frontend's names
    REQUIRES_FILTER_INT8x32_REORDER = _C["CUDNNFE_BEHAVIOR_NOTE_REQUIRES_FILTER_INT8X32_REORDER"]
    REQUIRES_BIAS_INT8x32_REORDER = _C["CUDNNFE_BEHAVIOR_NOTE_REQUIRES_BIAS_INT8X32_REORDER"]


class plan_source(_Enum):
    """Where a built graph's plan came from (``CUDNNFE_PLAN_SOURCE_*``).

    ``BUILT``: heuristics and plan build (and every CPU reference build);
    ``MEMORY_CACHE``: this process's plan cache; ``DISK_CACHE``: the plan
    cache directory; ``SERIALIZED``: a plan blob's engine configuration
    (:meth:`pygraph.deserialize_plan`); ``REBUILT``: a plan blob that did not
    fit this machine, rebuilt from its graph (``rebuild_on_mismatch=True``).
    """

    BUILT = _C["CUDNNFE_PLAN_SOURCE_BUILT"]
    MEMORY_CACHE = _C["CUDNNFE_PLAN_SOURCE_MEMORY_CACHE"]
    DISK_CACHE = _C["CUDNNFE_PLAN_SOURCE_DISK_CACHE"]
    SERIALIZED = _C["CUDNNFE_PLAN_SOURCE_SERIALIZED"]
    REBUILT = _C["CUDNNFE_PLAN_SOURCE_REBUILT"]


class diagonal_alignment(_Enum):
    """Where the diagonal of attention's diagonal band starts (``CUDNNFE_DIAGONAL_*``).

    ``TOP_LEFT``: row i's diagonal is column i; ``BOTTOM_RIGHT``: column
    ``i + s_kv - s_q`` (with padding, ``i + seq_len_kv - seq_len_q``).
    """

    TOP_LEFT = _C["CUDNNFE_DIAGONAL_TOP_LEFT"]
    BOTTOM_RIGHT = _C["CUDNNFE_DIAGONAL_BOTTOM_RIGHT"]


class attention_implementation(_Enum):
    """How :meth:`pygraph.sdpa` runs on cuDNN (``CUDNNFE_ATTENTION_IMPLEMENTATION_*``).

    ``AUTO``: the unified SDPA_FWD operation where the loaded cuDNN runs the
    node's options through it, else the composite graph; ``COMPOSITE``,
    ``UNIFIED``: that one (docs/attention.md).
    """

    AUTO = _C["CUDNNFE_ATTENTION_IMPLEMENTATION_AUTO"]
    COMPOSITE = _C["CUDNNFE_ATTENTION_IMPLEMENTATION_COMPOSITE"]
    UNIFIED = _C["CUDNNFE_ATTENTION_IMPLEMENTATION_UNIFIED"]


class resample_mode(_Enum):
    """Pooling or upsampling mode of :meth:`pygraph.resample` (``CUDNNFE_RESAMPLE_*``)."""

    MAXPOOL = _C["CUDNNFE_RESAMPLE_MAXPOOL"]
    AVGPOOL_INCLUDE_PADDING = _C["CUDNNFE_RESAMPLE_AVGPOOL_INCLUDE_PADDING"]
    AVGPOOL_EXCLUDE_PADDING = _C["CUDNNFE_RESAMPLE_AVGPOOL_EXCLUDE_PADDING"]
    NEAREST = _C["CUDNNFE_RESAMPLE_NEAREST"]
    BILINEAR = _C["CUDNNFE_RESAMPLE_BILINEAR"]


class padding_mode(_Enum):
    """What pooling reads outside the image (``CUDNNFE_PADDING_*``).

    ``AUTO``: ``NEG_INF`` for max pooling, ``ZERO`` for average pooling.
    cudnn-frontend's ``ZERO_PAD``, ``NEG_INF_PAD`` and ``EDGE_VAL_PAD`` are
    aliases.
    """

    AUTO = _C["CUDNNFE_PADDING_AUTO"]
    ZERO = _C["CUDNNFE_PADDING_ZERO"]
    NEG_INF = _C["CUDNNFE_PADDING_NEG_INF"]
    EDGE = _C["CUDNNFE_PADDING_EDGE"]
    # cudnn-frontend's names
    ZERO_PAD = _C["CUDNNFE_PADDING_ZERO"]
    NEG_INF_PAD = _C["CUDNNFE_PADDING_NEG_INF"]
    EDGE_VAL_PAD = _C["CUDNNFE_PADDING_EDGE"]


class rng_distribution(_Enum):
    """Distribution of :meth:`pygraph.rng` (``CUDNNFE_RNG_*``)."""

    BERNOULLI = _C["CUDNNFE_RNG_BERNOULLI"]
    UNIFORM = _C["CUDNNFE_RNG_UNIFORM"]
    NORMAL = _C["CUDNNFE_RNG_NORMAL"]


#: cudnn-frontend's spelling of :class:`conv_mode`.
convolution_mode = conv_mode


class tensor_reordering(_Enum):
    """cudnn-frontend's tensor reordering; the C ABI offers only ``NONE``."""

    NONE = 0
    INT8x32 = FE_ONLY_BASE
    F16x16 = FE_ONLY_BASE + 1
    F8_128x4 = FE_ONLY_BASE + 2


class scalar_type(_Enum):
    """How :meth:`pygraph.tensor_scalar` passes its value to cuDNN.

    Both become a pass-by-value scalar of the graph in cudnnfe (its value is
    part of the graph, as cuDNN's compile-time constants are).
    """

    RUNTIME_PARAM = 0
    COMPILE_TIME_CONST = 1


class reshape_mode(_Enum):
    """cudnn-frontend's reshape kinds; cudnnfe's reshape is ``LOGICAL`` (row-major order)."""

    LOGICAL = 0
    VIEW_ONLY = 1


class knob_type(_Enum):
    """cudnn-frontend's engine knob names (engine knobs are not offered by the C ABI)."""

    NOT_SET = 0
    SPLIT_K_BUF = 1
    SPLIT_K_SLC = 2
    SPLIT_P_SLC = 3
    SWIZZLE = 4
    TILE_SIZE = 5
    EDGE = 6
    MULTIPLY = 7
    SPECFILT = 8
    KERNEL_CFG = 9
    WORKSPACE = 10
    TILE_CGA_M = 11
    TILE_CGA_N = 12
    BLOCK_SIZE = 13
    OCCUPANCY = 14
    ARRAY_SIZE_PER_THREAD = 15
    SPLIT_COLS = 16
    TILE_ROWS = 17
    TILE_COLS = 18
    LOAD_SIZE = 19
    CTA_COUNT = 20
    STREAM_K = 21
    SPLIT_P = 22
    TILE_M = 23
    TILE_N = 24
    WARP_SPEC_CFG = 25
    STAGES = 26
    REDUCTION_MODE = 27
    IDX_MODE = 28
    TILEK = 29


class moe_grouped_matmul_mode(_Enum):
    """Routing of :meth:`pygraph.moe_grouped_matmul` (``CUDNNFE_MOE_GROUPED_MATMUL_MODE_*``)."""

    NONE = _C["CUDNNFE_MOE_GROUPED_MATMUL_MODE_NONE"]
    GATHER = _C["CUDNNFE_MOE_GROUPED_MATMUL_MODE_GATHER"]
    SCATTER = _C["CUDNNFE_MOE_GROUPED_MATMUL_MODE_SCATTER"]


#: Per enumeration, the members that exist for cudnn-frontend code only
#: (values >= FE_ONLY_BASE; refused when passed to the library).
FE_ONLY = {enum: frozenset(m.name for m in enum if m.value >= FE_ONLY_BASE)
           for enum in (data_type, heur_mode, reduction_mode, norm_forward_phase)}


def is_fe_only(value: object) -> bool:
    """True for a member (or int) that the C ABI has no constant for."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= FE_ONLY_BASE


# C constant prefix of each enumeration, for the completeness test (the two
# flag enumerations, whose iteration skips ALL and aliases, are checked in
# tests/test_plans.py).
PREFIXES = {
    data_type: "CUDNNFE_DTYPE_",
    heur_mode: "CUDNNFE_HEUR_MODE_",
    target: "CUDNNFE_TARGET_",
    conv_mode: "CUDNNFE_CONV_MODE_",
    pointwise_mode: "CUDNNFE_POINTWISE_",
    reduction_mode: "CUDNNFE_REDUCTION_",
    norm_forward_phase: "CUDNNFE_NORM_PHASE_",
    tensor_kind: "CUDNNFE_TENSOR_KIND_",
    build_plan_policy: "CUDNNFE_BUILD_POLICY_",
    plan_source: "CUDNNFE_PLAN_SOURCE_",
    diagonal_alignment: "CUDNNFE_DIAGONAL_",
    resample_mode: "CUDNNFE_RESAMPLE_",
    padding_mode: "CUDNNFE_PADDING_",
    rng_distribution: "CUDNNFE_RNG_",
}

#: Flag enumerations and their C prefixes; aliases (cudnn-frontend spellings)
#: are the names whose member has another canonical name.
FLAG_PREFIXES = {
    numerical_note: "CUDNNFE_NUMERICAL_NOTE_",
    behavior_note: "CUDNNFE_BEHAVIOR_NOTE_",
}
