// A small JSON value, writer and hardened parser for the graph description.
// The parser bounds nesting depth and input size and never allocates from
// sizes found in the input, so hostile bytes cannot crash it or make it
// allocate without bound.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cudnnfe::json {

class Value {
 public:
  enum class Type { kNull, kBool, kInt, kDouble, kString, kArray, kObject };

  Value() = default;
  static Value boolean(bool b);
  static Value integer(int64_t i);
  static Value number(double d);  // non-finite values are written as strings
  static Value string(std::string s);
  static Value array();
  static Value object();

  Type type() const { return type_; }
  // Builders.
  Value &push(Value v);
  Value &set(const std::string &key, Value v);

  // Typed access; each throws BAD_SERIALIZED_DATA naming `where`.
  bool as_bool(const std::string &where) const;
  int64_t as_int(const std::string &where) const;
  double as_double(const std::string &where) const;  // ints, doubles, "NaN", "Infinity"
  const std::string &as_string(const std::string &where) const;
  const std::vector<Value> &as_array(const std::string &where) const;
  const Value &at(const std::string &key, const std::string &where) const;  // required key
  const Value *find(const std::string &key) const;                          // optional key
  const std::map<std::string, Value> &as_object(const std::string &where) const;

  std::string dump() const;

 private:
  void dump_to(std::string &out, int indent) const;

  Type type_ = Type::kNull;
  bool bool_ = false;
  int64_t int_ = 0;
  double double_ = 0;
  std::string string_;
  std::vector<Value> array_;
  std::map<std::string, Value> object_;

  friend class Parser;
};

constexpr size_t kMaxInputBytes = 64u << 20;
constexpr int kMaxDepth = 32;

// Throws BAD_SERIALIZED_DATA with the byte offset of the problem.
Value parse(const char *data, size_t size);

}  // namespace cudnnfe::json
