#!/usr/bin/env python3
"""Writes docs/reference/c-api.md, the C ABI reference of the documentation site.

The header is the manual (docs/design.md; STYLE.md: "one header read top to
bottom"): this page is include/cudnnfe/cudnnfe.h rendered in its own order.
Each banner (top rule, title, text, bottom rule) becomes a section; the comment
above a declaration becomes its text and the declaration a C block, under a
heading named after the function or type it declares. Comments inside structs
and enumerations stay in the C block, beside the fields and values they
describe. abi/manifest.json (scripts/gen_abi_manifest.py) gives the list of
functions, checked against what this script finds, the option structs' init
functions and users, and the sizes; "since X.Y" marks are read from the
comments.

Usage: python3 scripts/gen_c_api_docs.py [--check] [--header H] [--manifest M] [--out F]
  --check writes nothing and exits 1 when the committed page is stale
  (tests/docs_site/test_generated_docs.py runs it).
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import cudnnfe_abi  # noqa: E402

REPO = cudnnfe_abi.REPO
DEFAULT_OUT = os.path.join(REPO, "docs", "reference", "c-api.md")
RULE = re.compile(r"^/\* -{20,} \*/$")
BANNER_LINE = re.compile(r"^/\*(.*)\*/$")
# A declaration's own mark ends its comment ("... (since 0.3)", "... since 0.3");
# marks inside the text date a feature, not the declaration.
SINCE = re.compile(r"\(?\bsince (\d+\.\d+)\)?\.?$")
C_COMMENT = re.compile(r"/\*.*?\*/", re.S)
IDENT = re.compile(r"\b((?:cudnnfe|CUDNNFE)_\w+)")
DOC_PATH = re.compile(r"\bdocs/([\w-]+\.md)\b")
FUNC_NAME = re.compile(r"\b(cudnnfe_\w+)\s*\(")
TYPEDEF_NAME = re.compile(r"\b(cudnnfe_\w+_t)\s*;")
FUNC_PTR_TYPEDEF = re.compile(r"typedef\s+[^;(]*\(\s*\*\s*(cudnnfe_\w+_t)\s*\)")
MACRO_NAME = re.compile(r"^#define\s+(\w+)")
# Lines that only guard the header; not shown.
# The experimental gate's lines too: its part is a section of its own (its banner says
# so), rendered like the others.
GUARDS = re.compile(r'^(#ifndef CUDNNFE_CUDNNFE_H|#define CUDNNFE_CUDNNFE_H|#include |#ifdef __cplusplus|'
                    r'#ifdef CUDNNFE_EXPERIMENTAL|'
                    r'#endif|extern "C" \{|\} /\* extern "C" \*/)')


class Item:
    """A declaration with the comment above it (either may be empty)."""

    def __init__(self):
        self.comment = []  # comment text lines, delimiters removed
        self.code = []  # C lines as written

    def names(self):
        text = C_COMMENT.sub(" ", "\n".join(self.code))
        found = []
        for pattern in (FUNC_PTR_TYPEDEF, TYPEDEF_NAME, FUNC_NAME):
            for m in pattern.finditer(text):
                if m.group(1) not in found:
                    found.append(m.group(1))
        if not found:  # constants only: the first macro names the item
            for line in self.code:
                m = MACRO_NAME.match(line)
                if m:
                    found.append(m.group(1))
                    break
        return found

    def kind(self):
        text = "\n".join(self.code)
        if "typedef struct" in text and "{" in text:
            return "struct"
        if re.search(r"^typedef int32_t \w+;", text, re.M):
            return "enum"
        if FUNC_PTR_TYPEDEF.search(text):
            return "callback"
        if text.startswith("typedef"):
            return "type"
        if FUNC_NAME.search(text) and not text.startswith("#define"):
            return "function"
        return "constants"


class Section:
    def __init__(self, title, text):
        self.title, self.text, self.items = title, text, []


def comment_lines(raw):
    """The text of a /* ... */ comment given as its source lines."""
    out = []
    for i, line in enumerate(raw):
        s = line.strip()
        if i == 0:
            s = s[2:]
        elif s.startswith("*") and not s.startswith("*/"):
            s = s[1:]
            s = s[1:] if s.startswith(" ") else s
        if s.endswith("*/"):
            s = s[:-2]
        out.append(s.rstrip())
    while out and not out[0].strip():
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    return out


def read_banner(lines, i):
    """Parses a banner starting at the top rule lines[i]; returns (title, text, next index)."""
    body = []
    i += 1
    while not RULE.match(lines[i].strip()):
        m = BANNER_LINE.match(lines[i].strip())
        if not m:
            raise SystemExit("gen_c_api_docs.py: unterminated banner at line %d" % (i + 1))
        body.append(m.group(1).rstrip()[1:] if m.group(1).startswith(" ") else m.group(1).rstrip())
        i += 1
    title = body[0].strip()
    text = body[1:]
    while text and not text[0].strip():
        text.pop(0)
    return title, text, i + 1


def split_header(text):
    """(intro comment lines, [Section]) in header order."""
    lines = text.split("\n")
    i = 0
    while not lines[i].strip().startswith("/*"):
        i += 1
    start = i
    while "*/" not in lines[i]:
        i += 1
    intro = comment_lines(lines[start:i + 1])
    i += 1
    sections = []
    item = None
    depth = 0  # braces of a struct being read
    in_enum = False  # reading an enumeration's #defines (comments stay in its code)
    continued = False  # the previous line ended with a backslash
    while i < len(lines):
        line = lines[i]
        s = line.strip()
        if RULE.match(s):
            title, btext, i = read_banner(lines, i)
            sections.append(Section(title, btext))
            item, in_enum = None, False
            continue
        if not sections or GUARDS.match(s):
            i += 1
            continue
        if not s:
            item, in_enum = None, False
            i += 1
            continue
        if s.startswith("/*") and depth == 0 and not continued and not in_enum:
            j = i
            while "*/" not in lines[j]:
                j += 1
            if item is None or item.code:
                item = Item()
                sections[-1].items.append(item)
            item.comment += comment_lines(lines[i:j + 1])
            i = j + 1
            continue
        if item is None:
            item = Item()
            sections[-1].items.append(item)
        item.code.append(line.rstrip())
        depth += line.count("{") - line.count("}")
        continued = line.endswith("\\")
        if depth == 0 and re.match(r"typedef int32_t \w+;", s):
            in_enum = True
        elif in_enum and not (s.startswith("#define") or s.startswith("/*") or s.startswith("*")
                              or continued):
            in_enum = False
        i += 1
    return intro, sections


def since_of(comment):
    m = SINCE.search(" ".join(line.strip() for line in comment).strip())
    return m.group(1) if m else None


CODE_SPAN = re.compile(r"(`[^`]*`)")


ANCHORS = set()  # names with a heading or anchor on the page (set by render)
DOCS_DIR = os.path.join(REPO, "docs")


def code_ref(name):
    """`name`, linked to its entry when the page has one."""
    return "[`%s`](#%s)" % (name, slug(name)) if name in ANCHORS else "`%s`" % name


def escape_plain(text):
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([\\*_\[\]|])", r"\\\1", text)


def escape_markdown(line):
    """Markdown-safe prose: code spans kept, the header's names as code (linked to
    their entries), docs/*.md as links, what Markdown or HTML would take escaped."""
    parts = CODE_SPAN.split(line)
    for k, p in enumerate(parts):
        if k % 2:
            if p[1:-1] in ANCHORS:
                parts[k] = code_ref(p[1:-1])
            continue
        out = []
        for j, q in enumerate(re.split(r"(\b(?:cudnnfe|CUDNNFE)_\w+|\bdocs/[\w-]+\.md\b)", p)):
            if j % 2 == 0:
                out.append(escape_plain(q))
            elif q.startswith("docs/") and os.path.exists(os.path.join(DOCS_DIR, q[5:])):
                out.append("[%s](../%s)" % (q, q[5:]))
            elif q.startswith("docs/"):
                out.append("`%s`" % q)
            else:
                out.append(code_ref(q))
        parts[k] = "".join(out)
    return "".join(parts)


LIST_ITEM = re.compile(r"^\s*(-|\d+\.)\s")


def prose(lines):
    """Comment lines as Markdown: lines flow into paragraphs; a list gets the blank
    line before it that Markdown needs; any other indented run (a table laid out
    with spaces, a formula) stays as written, in a text block."""
    out = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            out.append("")
            i += 1
        elif LIST_ITEM.match(line):
            if out and out[-1]:
                out.append("")
            out.append(escape_markdown(line.strip()))
            i += 1
            while i < len(lines) and lines[i].strip() and not LIST_ITEM.match(lines[i]) \
                    and lines[i].startswith(" "):
                out.append("    " + escape_markdown(lines[i].strip()))
                i += 1
        elif line.startswith("  "):
            run = []
            while i < len(lines) and lines[i].strip() and lines[i].startswith("  ") \
                    and not LIST_ITEM.match(lines[i]):
                run.append(lines[i])
                i += 1
            indent = min(len(r) - len(r.lstrip()) for r in run)
            if out and out[-1]:
                out.append("")
            out += ["```text"] + [r[indent:] for r in run] + ["```", ""]
        else:
            out.append(escape_markdown(line.strip()))
            i += 1
    return out


def slug(name):
    return name.lower()


def render(header_path, manifest):
    with open(header_path, encoding="utf-8") as f:
        intro, sections = split_header(f.read())
    functions = {fn["name"]: fn for fn in manifest["functions"]}
    structs = {s["typedef"]: s for s in manifest["structs"] if s.get("typedef")}
    ANCHORS.clear()
    for section in sections:
        for item in section.items:
            if item.code:
                ANCHORS.update(item.names())
    rendered, where = set(), {}
    out = [
        "<!-- Generated by scripts/gen_c_api_docs.py from include/cudnnfe/cudnnfe.h and",
        "     abi/manifest.json: do not edit (tests/docs_site/test_generated_docs.py fails",
        "     when it is stale). -->",
        "# C ABI reference",
        "",
        "`include/cudnnfe/cudnnfe.h` in its own order: every banner of the header is a",
        "section, every declaration is shown as written with the comment above it as its",
        "text. The header is the authority; this page is regenerated from it",
        "(`python3 scripts/gen_c_api_docs.py`). ABI version %d, library version %d.%d.%d;"
        % tuple(next(c["value"] for c in manifest["constants"] if c["name"] == n)
                for n in ("CUDNNFE_ABI_VERSION", "CUDNNFE_VERSION_MAJOR", "CUDNNFE_VERSION_MINOR",
                          "CUDNNFE_VERSION_PATCH")),
        "%d functions, %d structs (%d option structs with an init function)."
        % (len(functions), len(structs), sum(1 for s in structs.values() if s.get("init"))),
        "Marks such as *since 0.3* say in which version a declaration was added.",
        "",
        "## Conventions",
        "",
    ]
    out += prose(intro[1:] if intro and intro[0].startswith("cudnnfe") else intro)
    out.append("")
    body = []
    for section in sections:
        anchor = "sec-" + re.sub(r"[^a-z0-9]+", "-", section.title.lower()).strip("-")
        body += ["## %s {#%s}" % (escape_markdown(section.title), anchor), ""]
        if section.text:
            body += prose(section.text) + [""]
        for item in section.items:
            names = item.names()
            if not item.code:  # a comment on its own
                body += prose(item.comment) + [""]
                continue
            since = since_of(item.comment)
            kind = item.kind()
            if names:
                head = names[0]
                label = "`%s`" % head
                tag = {"struct": "struct", "enum": "enumeration", "callback": "callback",
                       "type": "type", "constants": "constants"}.get(kind)
                extra = " *%s*" % tag if tag else ""
                if since:
                    extra += " *since %s*" % since
                body += ["### %s%s {#%s}" % (label, extra, slug(head)), ""]
                for other in names[1:]:
                    body += ['<a id="%s"></a>' % slug(other)]
                if len(names) > 1:
                    body.append("")
                for n in names:
                    rendered.add(n)
                    where.setdefault(n, (section.title, since))
            body += prose(item.comment)
            if item.comment:
                body.append("")
            body += ["```c"] + item.code + ["```", ""]
            for n in names:
                s = structs.get(n)
                if s is not None:
                    note = "%d bytes, alignment %d." % (s["size"], s["align"])
                    if s.get("init"):
                        note += " Filled with defaults by [`%s`](#%s)." % (s["init"], slug(s["init"]))
                    users = [u for u in s.get("used_by", []) if u != s.get("init")]
                    if users:
                        note += " Taken by " + ", ".join("[`%s`](#%s)" % (u, slug(u))
                                                         for u in users) + "."
                    body += [note, ""]
    missing = sorted(set(functions) - rendered)
    if missing:
        raise SystemExit("gen_c_api_docs.py: functions of the manifest not found in the header "
                         "text: %s" % ", ".join(missing))
    out += ["## Index", "", "Every function, with the section of the header it is in and the version",
            "its own comment says it was added in (a section's title may say so for all of it).",
            "", "| function | section | since |", "| --- | --- | --- |"]
    for name in sorted(functions):
        title, since = where[name]
        out.append("| [`%s`](#%s) | %s | %s |" % (name, slug(name), escape_markdown(title),
                                                   since or ""))
    out.append("")
    return "\n".join(out + body).rstrip("\n") + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--header", default=cudnnfe_abi.DEFAULT_HEADER)
    ap.add_argument("--manifest", default=cudnnfe_abi.DEFAULT_MANIFEST)
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 if the output is missing or stale")
    args = ap.parse_args(argv)
    with open(args.manifest, encoding="utf-8") as f:
        manifest = json.load(f)
    text = render(args.header, manifest)
    return cudnnfe_abi.write_generated(args.out, text, args.check,
                                       "python3 scripts/gen_c_api_docs.py", announce=True)


if __name__ == "__main__":
    sys.exit(main())
