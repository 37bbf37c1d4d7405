#!/usr/bin/env python3
"""Writes cudnnfe/src/options_gen.rs: the mechanical half of the op options, from abi/manifest.json.

For every op's C options struct (`cudnnfe_*_options_t` with a `name`) that
has a hand-written Rust struct of the same fields (src/options.rs: the
idiomatic types and docs), it writes
  * `Default`, reading the library's defaults (`cudnnfe_*_init_sized`),
  * `to_raw`, the C struct from the C defaults and every field,
  * a builder setter for each field that has no hand-written method of
    that name (`fn seq_len_q(self, Tensor) -> Self`).
The conversion of each field follows from its C type and its Rust type:
bool <-> int32 0/1, Option<Tensor> <-> a tensor UID (0: none),
Option<i64> <-> int64 with the default the header states as "none",
enumerations via from_raw/as_raw, numbers and arrays copied. A field with
no rule, or a C field the Rust struct lacks, is an error: a new header
field cannot be silently left out. It writes no other code (the build and
plan options, whose pointer fields need ownership, stay hand-written).

options.rs includes the output (`include!`), so it shares that module's
helpers (init, opt_tensor, opt_uid, name_ptr).

Usage: python3 bindings/rust/gen_options.py [--check] [--out F]
"""
import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "scripts"))
import cudnnfe_abi  # noqa: E402

SRC = os.path.join(HERE, "cudnnfe", "src")
DEFAULT_OUT = os.path.join(SRC, "options_gen.rs")
HAND_WRITTEN = [os.path.join(SRC, "options.rs")]
# The Rust names of the C enumerations whose CamelCase differs.
ENUM_NAMES = {"cudnnfe_dtype_t": "DataType"}
SCALAR_RUST = {"int32_t": "i32", "int64_t": "i64", "uint32_t": "u32", "double": "f64"}


class GenError(Exception):
    pass


def camel(snake):
    return "".join(w[:1].upper() + w[1:] for w in snake.split("_"))


def rust_struct_name(typedef):
    return camel(typedef[len("cudnnfe_"):-len("_t")])


def enum_name(typedef):
    return ENUM_NAMES.get(typedef, camel(typedef[len("cudnnfe_"):-len("_t")]))


def hand_written(text):
    """{struct: (fields {name: type}, derives Default, method names)}."""
    out = {}
    macros = {m.group(1): set(re.findall(r"pub fn (\w+)", m.group(2)))
              for m in re.finditer(r"macro_rules! (\w+) \{(.*?)\n\}", text, re.S)}
    for m in re.finditer(r"#\[derive\(([^)]*)\)\]\s*(?:#\[[^\]]*\]\s*)*pub struct (\w+) \{(.*?)\n\}",
                         text, re.S):
        fields = dict(re.findall(r"^\s*pub (\w+): ([^\n]+),$", m.group(3), re.M))
        out[m.group(2)] = (fields, "Default" in m.group(1), set())
    for m in re.finditer(r"^impl (\w+) \{(.*?)^\}", text, re.S | re.M):
        if m.group(1) in out:
            methods = out[m.group(1)][2]
            methods |= set(re.findall(r"pub fn (\w+)", m.group(2)))
            for macro in re.findall(r"(\w+)!\(\);", m.group(2)):
                methods |= macros.get(macro, set())
    return out


def conversion(f, rust_type, enums):
    """(expression from `raw`, expression to `raw`, setter parameter type) of a field."""
    name, ctype = f["name"], f["type"]
    if f["c_type"] == "const char *" and name == "name":
        return "None", "name_ptr(name)", None
    if ctype["kind"] == "array":
        return "raw.%s" % name, "self.%s" % name, None  # const-generic setters are hand-written
    cname, scalar = ctype["name"], f.get("scalar")
    if cname in enums and rust_type == enum_name(cname):
        return "%s::from_raw(raw.%s)" % (rust_type, name), "self.%s.as_raw()" % name, rust_type
    if rust_type == "bool" and scalar == "int32_t":
        return "raw.%s != 0" % name, "self.%s as i32" % name, "bool"
    if rust_type == "Option<Tensor>" and scalar == "int64_t":
        return "opt_tensor(raw.%s)" % name, "opt_uid(self.%s)" % name, "Tensor"
    if rust_type == "Option<i64>" and scalar == "int64_t":
        none = f["default"]
        if none is None or not re.fullmatch(r"-?\d+", none):
            raise GenError("%s: Option<i64> needs the header to state the default ('none')" % name)
        return ("(raw.%s != %s).then_some(raw.%s)" % (name, none, name),
                "self.%s.unwrap_or(%s)" % (name, none), "i64")
    if SCALAR_RUST.get(scalar) == rust_type:
        return "raw.%s" % name, "self.%s" % name, rust_type
    raise GenError("%s: no conversion between C %s and Rust %s" % (name, f["c_type"], rust_type))


def render_struct(s, rust, enums):
    typedef, init = s["typedef"], s["init"]
    name = rust_struct_name(typedef)
    fields, derives_default, methods = rust
    c_fields = [f for f in s["fields"] if f["name"] != "struct_size"]
    missing = [f["name"] for f in c_fields if f["name"] not in fields]
    extra = sorted(set(fields) - {f["name"] for f in c_fields})
    if missing or extra:
        raise GenError("%s: the Rust struct lacks %s and has %s beyond the C fields"
                       % (name, missing, extra))
    conv = [(f, conversion(f, fields[f["name"]], enums)) for f in c_fields]
    out = ["// ---- %s (`%s`)\n\n" % (name, typedef)]
    if not derives_default:
        out.append("impl Default for %s {\n    fn default() -> Self {\n" % name)
        used = any(c[0] != "None" for _, c in conv)
        out.append("        let %sraw = init(sys::%s);\n" % ("" if used else "_", init))
        out.append("        %s {\n" % name)
        out.extend("            %s: %s,\n" % (f["name"], c[0]) for f, c in conv)
        out.append("        }\n    }\n}\n\n")
    out.append("impl %s {\n" % name)
    setters = 0
    for f, c in conv:
        if c[2] is None or f["name"] in methods:
            continue
        setters += 1
        param = c[2]
        value = "Some(value)" if fields[f["name"]].startswith("Option<") else "value"
        out.append("    /// Sets `%s` (`%s` of `%s`).\n" % (f["name"], f["c_type"], typedef))
        out.append("    pub fn %s(mut self, value: %s) -> Self {\n" % (f["name"], param))
        out.append("        self.%s = %s;\n        self\n    }\n" % (f["name"], value))
    out.append("%s    pub(crate) fn to_raw(&self, name: &Option<CString>) -> sys::%s {\n"
               % ("\n" if setters else "", typedef))
    out.append("        let mut raw = init(sys::%s);\n" % init)
    out.extend("        raw.%s = %s;\n" % (f["name"], c[1]) for f, c in conv)
    out.append("        raw\n    }\n}\n\n")
    return "".join(out)


def render(abi, hand_text):
    rust = hand_written(hand_text)
    enums = {t["name"] for t in abi["typedefs"]}  # a Rust enum where the Rust field has its name
    out = ["// Generated by bindings/rust/gen_options.py from abi/manifest.json. DO NOT EDIT.\n"
           "// Regenerate: python3 bindings/rust/gen_options.py (tests/options_gen_fresh.rs\n"
           "// checks). Included by options.rs: Default, to_raw and the per-field builder\n"
           "// setters of the op options; the structs, their docs and the composite\n"
           "// builders are hand-written there.\n\n"]
    for s in cudnnfe_abi.options_structs(abi):
        if not any(f["name"] == "name" for f in s["fields"]):
            continue  # build, autotune, plan load: hand-written
        name = rust_struct_name(s["typedef"])
        if name not in rust:
            continue  # no safe wrapper yet (bindings/PENDING_IDIOMATIC.txt)
        out.append(render_struct(s, rust[name], enums))
    return "".join(out).rstrip("\n") + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--abi-manifest", default=cudnnfe_abi.DEFAULT_MANIFEST)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    hand = ""
    for path in HAND_WRITTEN:
        with open(path, encoding="utf-8") as f:
            hand += f.read()
    try:
        text = render(cudnnfe_abi.load(args.abi_manifest), hand)
    except (cudnnfe_abi.HeaderError, GenError) as e:
        print("gen_options.py: %s" % e, file=sys.stderr)
        return 2
    return cudnnfe_abi.write_generated(args.out, text, args.check,
                                       "python3 bindings/rust/gen_options.py")


if __name__ == "__main__":
    sys.exit(main())
