"""Every field of every C options struct (``cudnnfe_*_options_t``, from
``abi/manifest.json``) is set by the package when it fills that struct, or
is listed for ``python`` under ``[fields]`` in
``bindings/PENDING_IDIOMATIC.txt`` with a reason.

"Set" is read from the sources (ast): a function that allocates the struct
(``_structs.new("cudnnfe_X_options_t")``), or any helper it calls, assigns
``<obj>.<field> = ...`` or passes the field's name to ``setattr``.
"""
import ast
import json
import pathlib

import pytest

PKG = pathlib.Path(__file__).resolve().parents[1] / "cudnnfe"
REPO = PKG.parents[2]
MANIFEST = REPO / "abi" / "manifest.json"
PENDING = REPO / "bindings" / "PENDING_IDIOMATIC.txt"
GENERATED = {"_cdef.py"}

if not MANIFEST.is_file():  # an installed package outside the repository
    pytest.skip("abi/manifest.json is not next to these tests", allow_module_level=True)


def pending(binding):
    """(pending functions, this binding's pending fields {"S.f": reason})."""
    funcs, fields, in_fields = set(), {}, False
    for line in PENDING.read_text().splitlines():
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
                fields[key.strip()] = reason.strip()
    return funcs, fields


class _Function:
    def __init__(self, node):
        self.strings, self.assigned, self.calls = set(), set(), set()
        by_name = gets = writes_element = False
        for n in ast.walk(node):
            if isinstance(n, ast.Constant) and isinstance(n.value, str):
                self.strings.add(n.value)
            elif isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                for t in targets:
                    if isinstance(t, ast.Subscript):  # o.stride[i] = ... (a C array)
                        writes_element = True
                        t = t.value
                    if isinstance(t, ast.Attribute):
                        self.assigned.add(t.attr)
            elif isinstance(n, ast.Call):
                f = n.func
                name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)
                by_name |= name == "setattr"
                gets |= name == "getattr"
                self.calls.add(name)
        # setattr(o, field, v), or getattr(o, field)[i] = v, over a table of
        # field names: the names are the function's string constants.
        if by_name or (gets and writes_element):
            self.assigned |= self.strings


def functions():
    out = {}
    for path in sorted(PKG.glob("*.py")):
        if path.name in GENERATED:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.setdefault(node.name, []).append(_Function(node))
    return out


def fields_set(struct, funcs):
    """Fields assigned by the functions naming `struct` and their callees."""
    todo = [f for fs in funcs.values() for f in fs if struct in f.strings]
    seen, assigned = set(), set()
    while todo:
        f = todo.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        assigned |= f.assigned
        for name in f.calls:
            todo.extend(funcs.get(name, []))
    return assigned


def test_every_option_field_is_settable():
    manifest = json.loads(MANIFEST.read_text())
    pending_funcs, pending_fields = pending("python")
    funcs = functions()
    missing, stale, checked = [], [], 0
    for s in manifest["structs"]:
        if not s["options"] or s["init"] in pending_funcs:
            continue
        assigned = fields_set(s["typedef"], funcs)
        for f in s["fields"]:
            if f["name"] == "struct_size":
                continue
            checked += 1
            key = "%s.%s" % (s["typedef"], f["name"])
            listed = pending_fields.pop(key, None) is not None
            if f["name"] in assigned and listed:
                stale.append(key)
            elif f["name"] not in assigned and not listed:
                missing.append(key)
    stale += sorted(pending_fields)
    assert checked > 100, "checked only %d fields" % checked
    assert not missing, ("option fields the Python API never sets (wrap them, or list them as "
                         "'python S.f: reason' under [fields] in bindings/PENDING_IDIOMATIC.txt): "
                         "%s" % missing)
    assert not stale, "PENDING_IDIOMATIC.txt lists Python fields that are set or gone: %s" % stale
