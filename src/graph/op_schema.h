// What each op kind is, apart from how it is checked, lowered or run: its
// name, its ports and the fields of its attribute struct (one row per
// OpKind, in op_schema.cpp, expanded from graph/op_list.def). Graph JSON,
// the plan fingerprint (which is the JSON without names) and the op
// descriptions in error messages iterate the field list; no per-op code
// reads or writes attributes by hand. Fields that name their C options
// member also drive the C API's options copy and init defaults
// (read_c_options, write_c_defaults). The rules (ops/op_rules.h), the CPU
// reference (cpu/reference_table.cpp) and the lowering
// (backend/lowering_table.cpp) have their own rows, keyed by the same
// OpKind.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "graph/node.h"

namespace cudnnfe {

// The C++ type of an attribute field (enumerations are kInt32 with a codec).
enum class FieldType { kBool, kInt32, kInt64, kUint32, kDouble, kIntList, kSpatial };

// The type of the C options member a field is read from (flags and
// enumerations are int32_t there; kNone: the field is no C option).
enum class CType { kNone, kInt32, kUint32, kInt64, kDouble, kInt64x3 };

// Names of one enumeration's values, for JSON and error messages.
struct EnumCodec {
  const char *what;  // in "unknown <what> \"X\"" ("" for just "unknown \"X\"")
  const char *(*name)(int32_t value);
  bool (*from_name)(const std::string &name, int32_t *value);
  const char *hint;  // appended to that message ("" or " (A or B)")
};

// One field of an attribute struct: its JSON key (the C options field's
// name, docs/graph-json.md), its type and where it lives in the struct.
struct AttrField {
  const char *name = "";
  FieldType type = FieldType::kBool;
  void *(*get)(void *attrs) = nullptr;
  const EnumCodec *codec = nullptr;
  // kSpatial: how many of the 3 entries JSON holds.
  int (*count)(const void *attrs) = nullptr;
  // Documents written before the field existed lack it: it keeps its default.
  bool optional = false;
  // Shown in op descriptions (`pointwise "act" (RELU_FWD, FLOAT)`).
  bool describe = false;
  // What a loaded value must satisfy: min..max (integers), or `valid` with
  // `rule` ("is not FP8_E4M3 or FP8_E5M2").
  int64_t min = std::numeric_limits<int64_t>::min();
  int64_t max = std::numeric_limits<int64_t>::max();
  bool (*valid)(int64_t value) = nullptr;
  const char *rule = "";
  // The same-named member of the kind's C options struct (CUDNNFE_ATTR_C).
  size_t c_offset = 0;
  CType c_type = CType::kNone;

  AttrField with_codec(const EnumCodec &c) const {
    return edit([&](AttrField &f) { f.codec = &c; });
  }
  AttrField with_count(int (*c)(const void *)) const {
    return edit([&](AttrField &f) { f.count = c; });
  }
  AttrField as_optional() const {
    return edit([](AttrField &f) { f.optional = true; });
  }
  AttrField described() const {
    return edit([](AttrField &f) { f.describe = true; });
  }
  AttrField in_range(int64_t lo, int64_t hi) const {
    return edit([&](AttrField &f) { f.min = lo, f.max = hi; });
  }
  AttrField satisfying(bool (*v)(int64_t), const char *r) const {
    return edit([&](AttrField &f) { f.valid = v, f.rule = r; });
  }
  AttrField from_c(size_t offset, CType type) const {
    return edit([&](AttrField &f) { f.c_offset = offset, f.c_type = type; });
  }

  // The value of an integer or enumeration field as int64_t (and back).
  int64_t get_int(const void *attrs) const;
  void set_int(void *attrs, int64_t value) const;

 private:
  template <class F>
  AttrField edit(F &&f) const {
    AttrField copy = *this;
    f(copy);
    return copy;
  }
};

template <class>
inline constexpr bool kUnlistedFieldType = false;

template <class T>
constexpr FieldType field_type() {
  if constexpr (std::is_same_v<T, bool>)
    return FieldType::kBool;
  else if constexpr (std::is_same_v<T, int32_t>)
    return FieldType::kInt32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return FieldType::kInt64;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return FieldType::kUint32;
  else if constexpr (std::is_same_v<T, double>)
    return FieldType::kDouble;
  else if constexpr (std::is_same_v<T, std::vector<int64_t>>)
    return FieldType::kIntList;
  else if constexpr (std::is_same_v<T, std::array<int64_t, 3>>)
    return FieldType::kSpatial;
  else
    static_assert(kUnlistedFieldType<T>, "an attribute member of a type FieldType lacks");
}

template <class T>
constexpr CType c_type() {
  if constexpr (std::is_same_v<T, int32_t>)
    return CType::kInt32;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return CType::kUint32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return CType::kInt64;
  else if constexpr (std::is_same_v<T, double>)
    return CType::kDouble;
  else if constexpr (std::is_same_v<T, int64_t[3]>)
    return CType::kInt64x3;
  else
    static_assert(kUnlistedFieldType<T>, "a C options member of a type CType lacks");
}

// A field of struct S: CUDNNFE_ATTR(ConvAttrs, stride, "stride"); the type
// comes from the member, so a row cannot misstate it.
#define CUDNNFE_ATTR(S, member, key)                                                             \
  ::cudnnfe::AttrField {                                                                         \
    key, ::cudnnfe::field_type<std::remove_reference_t<decltype(std::declval<S &>().member)>>(), \
        [](void *a) -> void * { return &static_cast<S *>(a)->member; }                           \
  }

// A field that is also the same-named member of the C options struct C:
// CUDNNFE_ATTR_C(RngAttrs, seed, "seed", cudnnfe_rng_options_t).
#define CUDNNFE_ATTR_C(S, member, key, C) \
  CUDNNFE_ATTR(S, member, key)            \
      .from_c(offsetof(C, member),        \
              ::cudnnfe::c_type<std::remove_reference_t<decltype(std::declval<C &>().member)>>())

struct OpSchema {
  OpKind kind;
  const char *name;  // "conv_fprop": default node names, JSON
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  OpAttrs (*make_attrs)();  // the kind's attribute struct with its defaults
  std::vector<AttrField> fields;
};

// The row of `kind`; every OpKind has one.
const OpSchema &op_schema(OpKind kind);

// Copies the fields that name a C options member from `c_options` (the
// kind's C options struct, as read_options returns it) into `attrs` (the
// kind's attribute struct); flags become bools. The API's per-op code sets
// only what the options struct does not hold.
void read_c_options(OpKind kind, const void *c_options, void *attrs);
// Writes the kind's default attribute values into those C members: the
// body of an options struct's init function (one copy of each default).
void write_c_defaults(OpKind kind, void *c_options);

// The address of a node's attribute struct (whichever OpAttrs holds).
void *attrs_address(OpAttrs &attrs);
const void *attrs_address(const OpAttrs &attrs);

// Codecs of the enumerations that attribute fields use.
extern const EnumCodec kConvModeCodec;
extern const EnumCodec kPointwiseModeCodec;
extern const EnumCodec kReductionModeCodec;
extern const EnumCodec kNormPhaseCodec;
extern const EnumCodec kDiagonalAlignmentCodec;
extern const EnumCodec kAttentionImplementationCodec;
extern const EnumCodec kResampleModeCodec;
extern const EnumCodec kPaddingModeCodec;
extern const EnumCodec kRngDistributionCodec;
extern const EnumCodec kDtypeCodec;
extern const EnumCodec kMoeGroupedMatmulModeCodec;

}  // namespace cudnnfe
