#!/usr/bin/env python3
"""Writes internal/capi/options_gen.go, the Go mirrors of the C options structs, from abi/manifest.json.

For every `cudnnfe_*_options_t` it writes a Go struct with one field per C
field (name: `Name string`; arrays as Go arrays; enumerations as int32),
`XOptionsInit` (the C defaults), and `toC`, which fills the C struct from
the C defaults and the Go fields. SWIG cannot set these structs soundly (the
name pointer, the fixed arrays), so this replaces what was hand-written cgo.
It does not write the op wrappers, which pass the name and any pointer
field as call arguments (internal/capi/manual.go), nor the idiomatic layer.
OptionFields maps every C field to its Go field, for the field-coverage
test (coverage_test.go).

Usage: python3 bindings/go/gen_options.py [--check] [--out F]
"""
import argparse
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "scripts"))
import cudnnfe_abi  # noqa: E402

DEFAULT_OUT = os.path.join(HERE, "internal", "capi", "options_gen.go")

# Go spellings of C scalars.
GO_SCALARS = {"int8_t": "int8", "uint8_t": "uint8", "int16_t": "int16", "uint16_t": "uint16",
              "int32_t": "int32", "uint32_t": "uint32", "int64_t": "int64", "uint64_t": "uint64",
              "size_t": "uint64", "float": "float32", "double": "float64", "int": "int32"}
# Words Go spells in capitals (Go's initialisms, and this package's names).
INITIALISMS = {"sdpa": "SDPA", "fp8": "FP8", "kv": "KV", "id": "ID", "rng": "RNG", "uid": "UID"}
# Fields several structs share, gathered in one embedded struct so that the
# idiomatic layer fills them once: name -> the structs that embed it. It
# holds the fields common to all of them, except struct_size and name.
EMBEDDED = {"AttentionOptions": ("cudnnfe_sdpa_options_t", "cudnnfe_sdpa_backward_options_t")}


def go_name(snake):
    return "".join(INITIALISMS.get(w, w[:1].upper() + w[1:]) for w in snake.split("_"))


def struct_go_name(typedef):
    return go_name(typedef[len("cudnnfe_"):-len("_t")])


def is_name(f):
    return f["name"] == "name" and f["c_type"] == "const char *"


def mirrored(f):
    """Fields the Go struct holds: values and arrays, and the name."""
    return f["name"] != "struct_size" and (is_name(f) or f["type"]["kind"] != "ptr")


def go_type(f):
    t = f["type"]
    if is_name(f):
        return "string"
    if t["kind"] == "array":
        inner = t["of"]
        return "[%d]%s" % (t["length"], GO_SCALARS[cudnnfe_scalar(inner)])
    return GO_SCALARS[f["scalar"]]


def cudnnfe_scalar(t):
    return ALIASES.get(t["name"], t["name"])


def c_type(t):
    """The cgo spelling of a scalar or typedef C type."""
    return "C." + t["name"]


ALIASES = {}


def embedded_fields(abi):
    """Embedded struct name -> its C field names, in the first struct's order."""
    structs = {s["typedef"]: s for s in abi["structs"]}
    out = {}
    for name, users in EMBEDDED.items():
        common = set.intersection(*({f["name"] for f in structs[u]["fields"]} for u in users))
        out[name] = [f for f in structs[users[0]]["fields"]
                     if f["name"] in common and mirrored(f) and not is_name(f)]
    return out


def render_fields(fields, indent="\t"):
    width = max((len(go_name(f["name"])) for f in fields), default=0)
    return "".join("%s%s %s\n" % (indent, go_name(f["name"]).ljust(width), go_type(f))
                   for f in fields)


def render_copy(f, to_c):
    g, c = go_name(f["name"]), f["name"]
    t = f["type"]
    if t["kind"] == "array":
        if to_c:
            return "\tfor i := range o.%s {\n\t\tc.%s[i] = %s(o.%s[i])\n\t}\n" % (
                g, c, c_type(t["of"]), g)
        return "\tfor i := range o.%s {\n\t\to.%s[i] = %s(c.%s[i])\n\t}\n" % (
            g, g, GO_SCALARS[cudnnfe_scalar(t["of"])], c)
    if to_c:
        return "\tc.%s = %s(o.%s)\n" % (c, c_type(t), g)
    return "\to.%s = %s(c.%s)\n" % (g, go_type(f), c)


def render_struct(s, embeds):
    name = struct_go_name(s["typedef"])
    typedef = s["typedef"]
    own = [f for f in s["fields"] if mirrored(f)]
    embedded = [e for e, users in EMBEDDED.items() if typedef in users]
    shared = {f["name"] for e in embedded for f in embeds[e]}
    skipped = [f["name"] for f in s["fields"] if f["name"] != "struct_size" and not mirrored(f)]
    doc = "// %s mirrors %s (struct_size is implied)." % (name, typedef)
    if skipped:
        doc += "\n// Its pointer fields (%s) are call arguments of the wrapper." % ", ".join(skipped)
    out = [doc + "\ntype %s struct {\n" % name]
    out.append(render_fields([f for f in own if f["name"] not in shared]))
    out.extend("\t%s\n" % e for e in embedded)
    out.append("}\n\n")
    init = s["init"]
    out.append("// %sInit fills o with %s's defaults.\n" % (name, init[:-len("_sized")]))
    out.append("func %sInit(o *%s) {\n" % (name, name))
    out.append("\tvar c C.%s\n\tC.%s(&c, C.sizeof_%s)\n\t*o = %s{}\n\to.fromC(&c)\n}\n\n"
               % (typedef, init, typedef, name))
    out.append("// fromC copies c's fields (not the name) into o.\n")
    out.append("func (o *%s) fromC(c *C.%s) {\n" % (name, typedef))
    out.extend(render_copy(f, False) for f in own if not is_name(f))
    out.append("}\n\n")
    out.append("// roundTrip passes o through the C struct (toC, then fromC), name\n"
               "// aside: TestOptionsRoundTrip checks that every field survives.\n")
    keep = "Name: o.Name" if any(is_name(f) for f in own) else ""
    out.append("func (o *%s) roundTrip() any {\n\tvar c C.%s\n\to.toC(&c)\n\tr := %s{%s}\n"
               "\tr.fromC(&c)\n\treturn r\n}\n\n" % (name, typedef, name, keep))
    out.append("// toC fills c with the C defaults, then with o's fields (not the name,\n"
               "// which the wrapper points at a C string of its own).\n")
    out.append("func (o *%s) toC(c *C.%s) {\n" % (name, typedef))
    out.append("\tC.%s(c, C.sizeof_%s)\n" % (init, typedef))
    out.extend(render_copy(f, True) for f in own if not is_name(f))
    out.append("}\n\n")
    return "".join(out)


def render_table(structs):
    out = ["// OptionFields maps each options struct's C fields to the fields of its Go\n"
           "// mirror here (embedded fields by their promoted names); the pointer\n"
           "// fields, passed as call arguments, map to \"\".\n"
           "var OptionFields = map[string]map[string]string{\n"]
    for s in structs:
        out.append('\t"%s": {\n' % s["typedef"])
        for f in s["fields"]:
            if f["name"] != "struct_size":
                out.append('\t\t"%s": "%s",\n' % (f["name"], go_name(f["name"]) if mirrored(f)
                                                  else ""))
        out.append("\t},\n")
    out.append("}\n\n")
    out.append("// OptionStructs maps each options struct to its Go mirror's name.\n"
               "var OptionStructs = map[string]string{\n")
    out.extend('\t"%s": "%s",\n' % (s["typedef"], struct_go_name(s["typedef"])) for s in structs)
    out.append("}\n\n")
    out.append("// OptionEmbeds maps each Go mirror to the shared structs it embeds.\n"
               "var OptionEmbeds = map[string][]string{\n")
    for e, users in EMBEDDED.items():
        for u in users:
            out.append('\t"%s": {"%s"},\n' % (struct_go_name(u), e))
    out.append("}\n\n")
    out.append("// optionMirrors holds a zero value of every mirror, for the round-trip test.\n"
               "var optionMirrors = []interface{ roundTrip() any }{\n")
    out.extend("\t&%s{},\n" % struct_go_name(s["typedef"]) for s in structs)
    out.append("}\n")
    return "".join(out)


def render(abi):
    ALIASES.clear()
    ALIASES.update({t["name"]: t["c_type"] for t in abi["typedefs"]})
    structs = cudnnfe_abi.options_structs(abi)
    embeds = embedded_fields(abi)
    out = ["// Code generated by bindings/go/gen_options.py from abi/manifest.json. DO NOT EDIT.\n"
           "// Regenerate: python3 bindings/go/gen_options.py (TestOptionsGenUpToDate checks).\n\n"
           "package capi\n\n"
           "// The Go mirrors of the C options structs (see gen_options.py).\n\n"
           "/*\n#include \"cudnnfe/cudnnfe.h\"\n*/\nimport \"C\"\n\n"]
    for e, fields in embeds.items():
        out.append("// %s holds the fields %s share.\ntype %s struct {\n" % (
            e, " and ".join(EMBEDDED[e]), e))
        out.append(render_fields(fields))
        out.append("}\n\n")
    out.extend(render_struct(s, embeds) for s in structs)
    out.append(render_table(structs))
    return "".join(out)


def gofmt(text):
    """The text as gofmt writes it (the committed file is gofmt-clean)."""
    exe = shutil.which("gofmt")
    if exe is None and shutil.which("go"):
        goroot = subprocess.run(["go", "env", "GOROOT"], capture_output=True, text=True).stdout
        exe = os.path.join(goroot.strip(), "bin", "gofmt")
    if not exe or not os.path.exists(exe):
        raise cudnnfe_abi.HeaderError("gofmt not found (it comes with Go)")
    return subprocess.run([exe], input=text, capture_output=True, text=True, check=True).stdout


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--abi-manifest", default=cudnnfe_abi.DEFAULT_MANIFEST)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    try:
        text = gofmt(render(cudnnfe_abi.load(args.abi_manifest)))
    except cudnnfe_abi.HeaderError as e:
        print("gen_options.py: %s" % e, file=sys.stderr)
        return 2
    return cudnnfe_abi.write_generated(args.out, text, args.check,
                                       "python3 bindings/go/gen_options.py")


if __name__ == "__main__":
    sys.exit(main())
