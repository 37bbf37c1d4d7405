#include "serialize/json.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/error.h"

namespace cudnnfe::json {
namespace {

[[noreturn]] void bad(const std::string &where, const std::string &what) {
  fail(CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "graph JSON: ", where, ": ", what);
}

const char *type_name(Value::Type t) {
  switch (t) {
    case Value::Type::kNull: return "null";
    case Value::Type::kBool: return "a boolean";
    case Value::Type::kInt: return "an integer";
    case Value::Type::kDouble: return "a number";
    case Value::Type::kString: return "a string";
    case Value::Type::kArray: return "an array";
    case Value::Type::kObject: return "an object";
  }
  return "?";
}

void escape_to(std::string &out, const std::string &s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

}  // namespace

Value Value::boolean(bool b) {
  Value v;
  v.type_ = Type::kBool;
  v.bool_ = b;
  return v;
}
Value Value::integer(int64_t i) {
  Value v;
  v.type_ = Type::kInt;
  v.int_ = i;
  return v;
}
Value Value::number(double d) {
  if (std::isnan(d)) return string("NaN");
  if (std::isinf(d)) return string(d > 0 ? "Infinity" : "-Infinity");
  Value v;
  v.type_ = Type::kDouble;
  v.double_ = d;
  return v;
}
Value Value::string(std::string s) {
  Value v;
  v.type_ = Type::kString;
  v.string_ = std::move(s);
  return v;
}
Value Value::array() {
  Value v;
  v.type_ = Type::kArray;
  return v;
}
Value Value::object() {
  Value v;
  v.type_ = Type::kObject;
  return v;
}

Value &Value::push(Value v) {
  array_.push_back(std::move(v));
  return array_.back();
}
Value &Value::set(const std::string &key, Value v) {
  return object_[key] = std::move(v);
}

bool Value::as_bool(const std::string &where) const {
  if (type_ != Type::kBool) bad(where, cat("expected a boolean, found ", type_name(type_)));
  return bool_;
}
int64_t Value::as_int(const std::string &where) const {
  if (type_ != Type::kInt) bad(where, cat("expected an integer, found ", type_name(type_)));
  return int_;
}
double Value::as_double(const std::string &where) const {
  if (type_ == Type::kInt) return static_cast<double>(int_);
  if (type_ == Type::kDouble) return double_;
  if (type_ == Type::kString) {
    if (string_ == "NaN") return std::nan("");
    if (string_ == "Infinity") return HUGE_VAL;
    if (string_ == "-Infinity") return -HUGE_VAL;
  }
  bad(where, cat("expected a number, found ", type_name(type_)));
}
const std::string &Value::as_string(const std::string &where) const {
  if (type_ != Type::kString) bad(where, cat("expected a string, found ", type_name(type_)));
  return string_;
}
const std::vector<Value> &Value::as_array(const std::string &where) const {
  if (type_ != Type::kArray) bad(where, cat("expected an array, found ", type_name(type_)));
  return array_;
}
const std::map<std::string, Value> &Value::as_object(const std::string &where) const {
  if (type_ != Type::kObject) bad(where, cat("expected an object, found ", type_name(type_)));
  return object_;
}
const Value &Value::at(const std::string &key, const std::string &where) const {
  as_object(where);
  const Value *v = find(key);
  if (!v) bad(where, cat("missing key \"", key, "\""));
  return *v;
}
const Value *Value::find(const std::string &key) const {
  if (type_ != Type::kObject) return nullptr;
  auto it = object_.find(key);
  return it == object_.end() ? nullptr : &it->second;
}

std::string Value::dump() const {
  std::string out;
  dump_to(out, 0);
  out += '\n';
  return out;
}

void Value::dump_to(std::string &out, int indent) const {
  // Arrays of scalars stay on one line; objects get one key per line.
  const std::string pad(indent + 2, ' ');
  switch (type_) {
    case Type::kNull: out += "null"; break;
    case Type::kBool: out += bool_ ? "true" : "false"; break;
    case Type::kInt: out += std::to_string(int_); break;
    case Type::kDouble: {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.17g", double_);
      out += buf;
      // Keep doubles distinguishable from integers when read back.
      if (std::string(buf).find_first_of(".eEn") == std::string::npos) out += ".0";
      break;
    }
    case Type::kString: escape_to(out, string_); break;
    case Type::kArray: {
      bool nested = false;
      for (const Value &v : array_) nested |= v.type_ == Type::kArray || v.type_ == Type::kObject;
      out += '[';
      for (size_t i = 0; i < array_.size(); ++i) {
        if (i) out += nested ? "," : ", ";
        if (nested) out += "\n" + pad;
        array_[i].dump_to(out, indent + 2);
      }
      if (nested && !array_.empty()) out += "\n" + std::string(indent, ' ');
      out += ']';
      break;
    }
    case Type::kObject: {
      out += '{';
      size_t i = 0;
      for (const auto &[key, value] : object_) {
        out += i++ ? ",\n" : "\n";
        out += pad;
        escape_to(out, key);
        out += ": ";
        value.dump_to(out, indent + 2);
      }
      if (!object_.empty()) out += "\n" + std::string(indent, ' ');
      out += '}';
      break;
    }
  }
}

class Parser {
 public:
  Parser(const char *data, size_t size) : p_(data), begin_(data), end_(data + size) {}

  Value parse_document() {
    Value v = parse_value(0);
    skip_space();
    if (p_ != end_) error("unexpected bytes after the JSON document");
    return v;
  }

 private:
  [[noreturn]] void error(const std::string &what) { bad(cat("byte ", p_ - begin_), what); }

  void skip_space() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\t' || *p_ == '\r')) ++p_;
  }

  bool consume(const char *word) {
    const char *q = p_;
    for (const char *w = word; *w; ++w, ++q)
      if (q >= end_ || *q != *w) return false;
    p_ = q;
    return true;
  }

  Value parse_value(int depth) {
    if (depth > kMaxDepth) error(cat("nesting deeper than ", kMaxDepth));
    skip_space();
    if (p_ >= end_) error("unexpected end of input");
    switch (*p_) {
      case '{': return parse_object(depth);
      case '[': return parse_array(depth);
      case '"': return Value::string(parse_string());
      case 't':
        if (consume("true")) return Value::boolean(true);
        break;
      case 'f':
        if (consume("false")) return Value::boolean(false);
        break;
      case 'n':
        if (consume("null")) return Value();
        break;
      default:
        if (*p_ == '-' || (*p_ >= '0' && *p_ <= '9')) return parse_number();
    }
    error(cat("unexpected character '", *p_, "'"));
  }

  Value parse_object(int depth) {
    Value v = Value::object();
    ++p_;
    skip_space();
    if (p_ < end_ && *p_ == '}') {
      ++p_;
      return v;
    }
    while (true) {
      skip_space();
      if (p_ >= end_ || *p_ != '"') error("expected a key string");
      std::string key = parse_string();
      skip_space();
      if (p_ >= end_ || *p_ != ':') error("expected ':'");
      ++p_;
      if (v.object_.count(key)) error(cat("duplicate key \"", key, "\""));
      v.object_[key] = parse_value(depth + 1);
      skip_space();
      if (p_ < end_ && *p_ == ',') {
        ++p_;
        continue;
      }
      if (p_ < end_ && *p_ == '}') {
        ++p_;
        return v;
      }
      error("expected ',' or '}'");
    }
  }

  Value parse_array(int depth) {
    Value v = Value::array();
    ++p_;
    skip_space();
    if (p_ < end_ && *p_ == ']') {
      ++p_;
      return v;
    }
    while (true) {
      v.array_.push_back(parse_value(depth + 1));
      skip_space();
      if (p_ < end_ && *p_ == ',') {
        ++p_;
        continue;
      }
      if (p_ < end_ && *p_ == ']') {
        ++p_;
        return v;
      }
      error("expected ',' or ']'");
    }
  }

  static void append_utf8(std::string &out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  uint32_t parse_hex4() {
    if (end_ - p_ < 4) error("truncated \\u escape");
    uint32_t cp = 0;
    for (int i = 0; i < 4; ++i, ++p_) {
      char c = *p_;
      cp <<= 4;
      if (c >= '0' && c <= '9')
        cp |= c - '0';
      else if (c >= 'a' && c <= 'f')
        cp |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        cp |= c - 'A' + 10;
      else
        error("bad hex digit in \\u escape");
    }
    return cp;
  }

  std::string parse_string() {
    ++p_;  // opening quote
    std::string out;
    while (true) {
      if (p_ >= end_) error("unterminated string");
      char c = *p_++;
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) error("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (p_ >= end_) error("unterminated escape");
      char e = *p_++;
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp = parse_hex4();
          if (cp >= 0xD800 && cp < 0xDC00) {
            if (!consume("\\u")) error("unpaired surrogate in \\u escape");
            uint32_t low = parse_hex4();
            if (low < 0xDC00 || low >= 0xE000) error("bad low surrogate in \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xDC00 && cp < 0xE000) {
            error("unpaired surrogate in \\u escape");
          }
          append_utf8(out, cp);
          break;
        }
        default: error(cat("unknown escape '\\", e, "'"));
      }
    }
  }

  Value parse_number() {
    const char *start = p_;
    bool is_float = false;
    if (*p_ == '-') ++p_;
    if (p_ >= end_ || *p_ < '0' || *p_ > '9') error("malformed number");
    while (p_ < end_ && ((*p_ >= '0' && *p_ <= '9') || *p_ == '.' || *p_ == 'e' || *p_ == 'E' ||
                         *p_ == '+' || *p_ == '-')) {
      if (*p_ == '.' || *p_ == 'e' || *p_ == 'E') is_float = true;
      ++p_;
    }
    if (p_ - start > 64) error("number literal too long");
    std::string text(start, p_);
    char *stop = nullptr;
    errno = 0;
    if (!is_float) {
      long long i = std::strtoll(text.c_str(), &stop, 10);
      if (errno == ERANGE || *stop) error(cat("integer out of range or malformed: ", text));
      return Value::integer(i);
    }
    double d = std::strtod(text.c_str(), &stop);
    if (*stop || !std::isfinite(d)) error(cat("malformed number: ", text));
    return Value::number(d);
  }

  const char *p_;
  const char *begin_;
  const char *end_;
};

Value parse(const char *data, size_t size) {
  if (size == 0) bad("byte 0", "empty input");
  if (size > kMaxInputBytes)
    bad("byte 0", cat("input of ", size, " bytes exceeds the limit of ", kMaxInputBytes));
  return Parser(data, size).parse_document();
}

}  // namespace cudnnfe::json
