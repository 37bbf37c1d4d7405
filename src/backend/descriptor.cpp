#include "backend/descriptor.h"

#include <cstring>
#include <utility>

#include "backend/loader.h"
#include "core/error.h"

namespace cudnnfe::backend {
namespace {

#define CUDNNFE_NAME(x) \
  { x, #x }

struct AttrName {
  cudnnBackendAttributeName_t value;
  const char *name;
};

// The attributes cudnnfe sets or reads.
constexpr AttrName kAttrNames[] = {
    CUDNNFE_NAME(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT),
    CUDNNFE_NAME(CUDNN_ATTR_TENSOR_DATA_TYPE),
    CUDNNFE_NAME(CUDNN_ATTR_TENSOR_DIMENSIONS),
    CUDNNFE_NAME(CUDNN_ATTR_TENSOR_STRIDES),
    CUDNNFE_NAME(CUDNN_ATTR_TENSOR_UNIQUE_ID),
    CUDNNFE_NAME(CUDNN_ATTR_TENSOR_IS_VIRTUAL),
    CUDNNFE_NAME(CUDNN_ATTR_TENSOR_IS_BY_VALUE),
    CUDNNFE_NAME(CUDNN_ATTR_CONVOLUTION_COMP_TYPE),
    CUDNNFE_NAME(CUDNN_ATTR_CONVOLUTION_CONV_MODE),
    CUDNNFE_NAME(CUDNN_ATTR_CONVOLUTION_DILATIONS),
    CUDNNFE_NAME(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES),
    CUDNNFE_NAME(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS),
    CUDNNFE_NAME(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS),
    CUDNNFE_NAME(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY),
    CUDNNFE_NAME(CUDNN_ATTR_MATMUL_COMP_TYPE),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_MATMUL_ADESC),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_MATMUL_BDESC),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_MATMUL_CDESC),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_MATMUL_DESC),
    CUDNNFE_NAME(CUDNN_ATTR_POINTWISE_MODE),
    CUDNNFE_NAME(CUDNN_ATTR_POINTWISE_MATH_PREC),
    CUDNNFE_NAME(CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP),
    CUDNNFE_NAME(CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP),
    CUDNNFE_NAME(CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE),
    CUDNNFE_NAME(CUDNN_ATTR_POINTWISE_ELU_ALPHA),
    CUDNNFE_NAME(CUDNN_ATTR_POINTWISE_SOFTPLUS_BETA),
    CUDNNFE_NAME(CUDNN_ATTR_POINTWISE_SWISH_BETA),
    CUDNNFE_NAME(CUDNN_ATTR_POINTWISE_AXIS),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_POINTWISE_XDESC),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_POINTWISE_BDESC),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_POINTWISE_YDESC),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_POINTWISE_DXDESC),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_POINTWISE_DYDESC),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_POINTWISE_TDESC),
    CUDNNFE_NAME(CUDNN_ATTR_REDUCTION_OPERATOR),
    CUDNNFE_NAME(CUDNN_ATTR_REDUCTION_COMP_TYPE),
    CUDNNFE_NAME(CUDNN_ATTR_REDUCTION_IS_DETERMINISTIC),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_REDUCTION_XDESC),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_REDUCTION_YDESC),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_REDUCTION_DESC),
    CUDNNFE_NAME(CUDNN_ATTR_RESAMPLE_MODE),
    CUDNNFE_NAME(CUDNN_ATTR_RESAMPLE_COMP_TYPE),
    CUDNNFE_NAME(CUDNN_ATTR_RESAMPLE_SPATIAL_DIMS),
    CUDNNFE_NAME(CUDNN_ATTR_RESAMPLE_POST_PADDINGS),
    CUDNNFE_NAME(CUDNN_ATTR_RESAMPLE_PRE_PADDINGS),
    CUDNNFE_NAME(CUDNN_ATTR_RESAMPLE_STRIDES),
    CUDNNFE_NAME(CUDNN_ATTR_RESAMPLE_WINDOW_DIMS),
    CUDNNFE_NAME(CUDNN_ATTR_RESAMPLE_PADDING_MODE),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_RESAMPLE_FWD_XDESC),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_RESAMPLE_FWD_YDESC),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_RESAMPLE_FWD_IDXDESC),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_RESAMPLE_FWD_DESC),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_CONCAT_AXIS),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_CONCAT_INPUT_DESCS),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_CONCAT_INPLACE_INDEX),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_CONCAT_OUTPUT_DESC),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_RESHAPE_XDESC),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_RESHAPE_YDESC),
    CUDNNFE_NAME(CUDNN_ATTR_RNG_DISTRIBUTION),
    CUDNNFE_NAME(CUDNN_ATTR_RNG_NORMAL_DIST_MEAN),
    CUDNNFE_NAME(CUDNN_ATTR_RNG_NORMAL_DIST_STANDARD_DEVIATION),
    CUDNNFE_NAME(CUDNN_ATTR_RNG_UNIFORM_DIST_MAXIMUM),
    CUDNNFE_NAME(CUDNN_ATTR_RNG_UNIFORM_DIST_MINIMUM),
    CUDNNFE_NAME(CUDNN_ATTR_RNG_BERNOULLI_DIST_PROBABILITY),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_RNG_YDESC),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_RNG_SEED),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_RNG_DESC),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATION_RNG_OFFSET_DESC),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATIONGRAPH_HANDLE),
    CUDNNFE_NAME(CUDNN_ATTR_OPERATIONGRAPH_OPS),
    CUDNNFE_NAME(CUDNN_ATTR_ENGINEHEUR_MODE),
    CUDNNFE_NAME(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH),
    CUDNNFE_NAME(CUDNN_ATTR_ENGINEHEUR_RESULTS),
    CUDNNFE_NAME(CUDNN_ATTR_ENGINECFG_ENGINE),
    CUDNNFE_NAME(CUDNN_ATTR_ENGINECFG_KNOB_CHOICES),
    CUDNNFE_NAME(CUDNN_ATTR_ENGINE_GLOBAL_INDEX),
    CUDNNFE_NAME(CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE),
    CUDNNFE_NAME(CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE),
    CUDNNFE_NAME(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG),
    CUDNNFE_NAME(CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE),
    CUDNNFE_NAME(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS),
    CUDNNFE_NAME(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS),
    CUDNNFE_NAME(CUDNN_ATTR_VARIANT_PACK_WORKSPACE),
};

struct TypeName {
  cudnnBackendDescriptorType_t value;
  const char *name;
};

constexpr TypeName kTypeNames[] = {
    CUDNNFE_NAME(CUDNN_BACKEND_POINTWISE_DESCRIPTOR),
    CUDNNFE_NAME(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR),
    CUDNNFE_NAME(CUDNN_BACKEND_ENGINE_DESCRIPTOR),
    CUDNNFE_NAME(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR),
    CUDNNFE_NAME(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR),
    CUDNNFE_NAME(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR),
    CUDNNFE_NAME(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR),
    CUDNNFE_NAME(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR),
    CUDNNFE_NAME(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR),
    CUDNNFE_NAME(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR),
    CUDNNFE_NAME(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR),
    CUDNNFE_NAME(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR),
    CUDNNFE_NAME(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR),
    CUDNNFE_NAME(CUDNN_BACKEND_TENSOR_DESCRIPTOR),
    CUDNNFE_NAME(CUDNN_BACKEND_MATMUL_DESCRIPTOR),
    CUDNNFE_NAME(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR),
    CUDNNFE_NAME(CUDNN_BACKEND_REDUCTION_DESCRIPTOR),
    CUDNNFE_NAME(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR),
    CUDNNFE_NAME(CUDNN_BACKEND_RESAMPLE_DESCRIPTOR),
    CUDNNFE_NAME(CUDNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR),
    CUDNNFE_NAME(CUDNN_BACKEND_OPERATION_CONCAT_DESCRIPTOR),
    CUDNNFE_NAME(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR),
    CUDNNFE_NAME(CUDNN_BACKEND_RNG_DESCRIPTOR),
    CUDNNFE_NAME(CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR),
};

#undef CUDNNFE_NAME

[[noreturn]] void fail_attribute(const char *verb, cudnnBackendDescriptorType_t type,
                                 cudnnBackendAttributeName_t name, cudnnStatus_t status) {
  std::string reason = last_error();
  fail(CUDNNFE_STATUS_CUDNN_ERROR, "cuDNN refused to ", verb, " ", attribute_name(name), " on a ",
       descriptor_type_name(type), ": ", status_text(status),
       reason.empty() ? "" : cat(": ", reason));
}

}  // namespace

Descriptor::Descriptor(cudnnBackendDescriptorType_t type) : type_(type) {
  cudnnStatus_t status = cudnn().BackendCreateDescriptor(type, &desc_);
  if (status != CUDNN_STATUS_SUCCESS) {
    desc_ = nullptr;
    fail(CUDNNFE_STATUS_CUDNN_ERROR, "cuDNN could not create a ", descriptor_type_name(type), ": ",
         status_text(status));
  }
}

Descriptor::~Descriptor() {
  if (desc_) cudnn().BackendDestroyDescriptor(desc_);
}

Descriptor::Descriptor(Descriptor &&other) noexcept
    : desc_(std::exchange(other.desc_, nullptr)), type_(other.type_) {}

Descriptor &Descriptor::operator=(Descriptor &&other) noexcept {
  if (this != &other) {
    if (desc_) cudnn().BackendDestroyDescriptor(desc_);
    desc_ = std::exchange(other.desc_, nullptr);
    type_ = other.type_;
  }
  return *this;
}

void Descriptor::set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                     int64_t count, const void *values) {
  cudnnStatus_t status = cudnn().BackendSetAttribute(desc_, name, type, count, values);
  if (status != CUDNN_STATUS_SUCCESS) fail_attribute("set", type_, name, status);
}

void Descriptor::set_int64(cudnnBackendAttributeName_t name, int64_t value) {
  set(name, CUDNN_TYPE_INT64, 1, &value);
}
void Descriptor::set_int64s(cudnnBackendAttributeName_t name, const int64_t *values,
                            int64_t count) {
  set(name, CUDNN_TYPE_INT64, count, values);
}
void Descriptor::set_float(cudnnBackendAttributeName_t name, float value) {
  set(name, CUDNN_TYPE_FLOAT, 1, &value);
}
void Descriptor::set_double(cudnnBackendAttributeName_t name, double value) {
  set(name, CUDNN_TYPE_DOUBLE, 1, &value);
}
void Descriptor::set_bool(cudnnBackendAttributeName_t name, bool value) {
  set(name, CUDNN_TYPE_BOOLEAN, 1, &value);
}
void Descriptor::set_data_type(cudnnBackendAttributeName_t name, cudnnDataType_t value) {
  set(name, CUDNN_TYPE_DATA_TYPE, 1, &value);
}
void Descriptor::set_pointwise_mode(cudnnBackendAttributeName_t name, cudnnPointwiseMode_t value) {
  set(name, CUDNN_TYPE_POINTWISE_MODE, 1, &value);
}
void Descriptor::set_conv_mode(cudnnBackendAttributeName_t name, cudnnConvolutionMode_t value) {
  set(name, CUDNN_TYPE_CONVOLUTION_MODE, 1, &value);
}
void Descriptor::set_reduction_op(cudnnBackendAttributeName_t name, cudnnReduceTensorOp_t value) {
  set(name, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &value);
}
void Descriptor::set_heur_mode(cudnnBackendAttributeName_t name, cudnnBackendHeurMode_t value) {
  set(name, CUDNN_TYPE_HEUR_MODE, 1, &value);
}
void Descriptor::set_handle(cudnnBackendAttributeName_t name, cudnnHandle_t handle) {
  set(name, CUDNN_TYPE_HANDLE, 1, &handle);
}
void Descriptor::set_descriptor(cudnnBackendAttributeName_t name, const Descriptor &value) {
  cudnnBackendDescriptor_t raw = value.get();
  set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw);
}
void Descriptor::set_descriptors(cudnnBackendAttributeName_t name,
                                 const cudnnBackendDescriptor_t *values, int64_t count) {
  set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, values);
}
void Descriptor::set_pointers(cudnnBackendAttributeName_t name, void *const *values,
                              int64_t count) {
  set(name, CUDNN_TYPE_VOID_PTR, count, values);
}

void Descriptor::set_chars(cudnnBackendAttributeName_t name, const std::string &text) {
  set(name, CUDNN_TYPE_CHAR, static_cast<int64_t>(text.size()), text.data());
}

cudnnStatus_t Descriptor::try_finalize() {
  return cudnn().BackendFinalize(desc_);
}

void Descriptor::finalize() {
  cudnnStatus_t status = try_finalize();
  if (status != CUDNN_STATUS_SUCCESS) {
    std::string reason = last_error();
    fail(CUDNNFE_STATUS_CUDNN_ERROR, "cuDNN could not finalize a ", descriptor_type_name(type_),
         ": ", status_text(status), reason.empty() ? "" : cat(": ", reason));
  }
}

int64_t Descriptor::get(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                        int64_t capacity, void *out) const {
  int64_t count = 0;
  cudnnStatus_t status = cudnn().BackendGetAttribute(desc_, name, type, capacity, &count, out);
  if (status != CUDNN_STATUS_SUCCESS) fail_attribute("read", type_, name, status);
  return count;
}

int64_t Descriptor::get_int64(cudnnBackendAttributeName_t name) const {
  int64_t value = 0;
  get(name, CUDNN_TYPE_INT64, 1, &value);
  return value;
}

int64_t Descriptor::get_descriptors(cudnnBackendAttributeName_t name, cudnnBackendDescriptor_t *out,
                                    int64_t capacity) const {
  return get(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, capacity, out);
}

int64_t Descriptor::count_descriptors(cudnnBackendAttributeName_t name) const {
  return get(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, nullptr);
}

std::string attribute_name(cudnnBackendAttributeName_t name) {
  for (const AttrName &a : kAttrNames)
    if (a.value == name) return a.name;
  return cat("attribute ", static_cast<int>(name));
}

std::string descriptor_type_name(cudnnBackendDescriptorType_t type) {
  for (const TypeName &t : kTypeNames)
    if (t.value == type) return t.name;
  return cat("descriptor type ", static_cast<int>(type));
}

std::string condense_reason(const std::string &text) {
  // cuDNN's message is a trace: "Warning: <status>; Reason: <check>" lines
  // from the innermost check outwards, "at: ..." lines, and last the engine
  // configuration (JSON). The innermost check is the cause.
  std::string cause, engine, flat;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    line = line.substr(first);
    flat += cat(flat.empty() ? "" : " ", line);
    for (const char *prefix : {"Warning: ", "Error: "}) {
      if (line.rfind(prefix, 0) == 0 && cause.empty()) cause = line.substr(std::strlen(prefix));
    }
    if (line[0] == '{' && engine.empty()) engine = line;
  }
  if (cause.empty()) return flat;
  // Of the engine configuration, only the engine's number matters here.
  const std::string key = "\"engineId\":";
  const size_t at = engine.find(key);
  if (at == std::string::npos) return cause;
  const size_t begin = at + key.size();
  const size_t end = engine.find_first_not_of("-0123456789", begin);
  return cat(cause, " (engine ", engine.substr(begin, end - begin), ")");
}

std::string last_error() {
  char message[4096] = {};
  cudnn().GetLastErrorString(message, sizeof(message));
  return condense_reason(message);
}

std::string status_text(cudnnStatus_t status) {
  return cat(cudnn().GetErrorString(status), " (", static_cast<int>(status), ")");
}

}  // namespace cudnnfe::backend
