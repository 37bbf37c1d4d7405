"""Every field of every C options struct (`cudnnfe_*_options_t`, from
abi/manifest.json) is set by the idiomatic layer when it fills that
struct, or is listed for `julia` under `[fields]` in
bindings/PENDING_IDIOMATIC.txt with a reason.

"Set" is read from the sources: a top-level definition of src/ that names
`Lib.<struct>` (or its init function), or a helper it calls (transitively),
passes the field as a keyword (`_with(o; field = ...)`, a NamedTuple
splatted into `_with`)."""
import json
import os
import re

import jlcheck

REPO = os.path.dirname(os.path.dirname(jlcheck.PKG))
ABI_MANIFEST = os.path.join(REPO, "abi", "manifest.json")
PENDING = os.path.join(REPO, "bindings", "PENDING_IDIOMATIC.txt")

_ITEM_START = re.compile(r"^(?:function\s+([\w!.]+)|([A-Za-z_][\w!]*)(?:\{[^}\n]*\})?\(.*?\)\s*"
                         r"(?:where [^=\n]*)?=(?!=)|const |(?:mutable )?struct |macro )", re.M)


def pending(binding):
    funcs, fields, in_fields = set(), set(), False
    with open(PENDING, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line == "[fields]":
                in_fields = True
            elif not in_fields:
                funcs.add(line)
            else:
                who, rest = line.split(None, 1)
                key, sep, reason = rest.partition(":")
                assert sep and reason.strip(), "PENDING_IDIOMATIC.txt: %r has no reason" % line
                if who == binding:
                    fields.add(key.strip())
    return funcs, fields


def top_level_items():
    """{name: [code]} of the idiomatic layer's top-level definitions."""
    items = {}
    for name, text in jlcheck.julia_sources(jlcheck.SRC_DIR).items():
        if name == "LibCuDNNFE.jl":
            continue
        code = jlcheck.strip_docstrings(jlcheck.strip_julia_comments(text))
        starts = list(_ITEM_START.finditer(code))
        for i, m in enumerate(starts):
            end = starts[i + 1].start() if i + 1 < len(starts) else len(code)
            items.setdefault(m.group(1) or m.group(2) or "", []).append(
                _without_signature(code[m.start():end]))
    return items


def _without_signature(item):
    """A definition without its parameter list: keyword defaults there
    (`page_table_k = nothing`) set no field."""
    m = re.match(r"(?:function\s+)?[\w!.]+(?:\{[^}\n]*\})?\(", item)
    if not m:
        return item
    close = jlcheck.matching_paren(item, m.end() - 1)
    return item[:m.end()] + item[close - 1:]


def scope_of(typedef, items):
    stem = typedef[:-len("_t")]
    todo = [c for cs in items.values() for c in cs
            if re.search(r"\bLib\.%s(?:_t\b|_init_sized\b)" % re.escape(stem), c)]
    seen, out = set(), []
    while todo:
        c = todo.pop()
        if c in seen:
            continue
        seen.add(c)
        out.append(c)
        for callee in set(re.findall(r"(?<![\w.])([A-Za-z_][\w!]*)\(", c)):
            todo.extend(items.get(callee, []))
    return "\n".join(out)


def test_every_option_field_is_settable():
    with open(ABI_MANIFEST, encoding="utf-8") as f:
        manifest = json.load(f)
    pending_funcs, pending_fields = pending("julia")
    items = top_level_items()
    missing, stale, checked = [], [], 0
    for s in manifest["structs"]:
        if not s["options"] or s["init"] in pending_funcs:
            continue
        scope = scope_of(s["typedef"], items)
        for f in s["fields"]:
            if f["name"] == "struct_size":
                continue
            checked += 1
            key = "%s.%s" % (s["typedef"], f["name"])
            listed = key in pending_fields
            pending_fields.discard(key)
            set_ = re.search(r"\b%s\s*=(?!=)" % re.escape(f["name"]), scope) is not None
            if set_ and listed:
                stale.append(key)
            elif not set_ and not listed:
                missing.append(key)
    stale += sorted(pending_fields)
    assert checked > 100, "checked only %d fields" % checked
    assert not missing, ("option fields no Julia function sets (wrap them, or list them as "
                         "'julia S.f: reason' under [fields] in bindings/PENDING_IDIOMATIC.txt): "
                         "%s" % missing)
    assert not stale, "PENDING_IDIOMATIC.txt lists Julia fields that are set or gone: %s" % stale


def test_scopes_are_per_struct():
    # The backward's dropout_scale_inv is no field of the forward struct:
    # the forward's scope must not reach the backward's code.
    items = top_level_items()
    fwd, bwd = scope_of("cudnnfe_sdpa_options_t", items), scope_of(
        "cudnnfe_sdpa_backward_options_t", items)
    assert re.search(r"\bdropout_scale_inv\s*=", bwd)
    assert not re.search(r"\bdropout_scale_inv\s*=", fwd)
    assert re.search(r"\bpage_table_k\s*=", fwd) and not re.search(r"\bpage_table_k\s*=", bwd)
